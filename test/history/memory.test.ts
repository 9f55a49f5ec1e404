// The history suite with the default store: this process's memory.
import { historySuite } from './suite.ts';

historySuite({ name: 'memory', store: () => undefined });
