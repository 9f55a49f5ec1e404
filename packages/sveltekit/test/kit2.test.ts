// The fixture app built with SvelteKit 2 (svelte.config.js, Vite 7), tested over real sockets.
import { environmentSuite, fixtureSuite, handlerSuite } from './helpers/suite.ts';

fixtureSuite('kit2');
handlerSuite('kit2');
environmentSuite('kit2');
