// Redis classic pub/sub (PUBLISH/SUBSCRIBE): the common bus suite against a real redis-server.
import { busSuite } from './suite.ts';
import { redisHarness } from './redis-harness.ts';

busSuite(redisHarness(false));
