// The fixture app built with SvelteKit 3 (vite.config.js, Vite 8), tested over real sockets.
import { environmentSuite, fixtureSuite, handlerSuite } from './helpers/suite.ts';

fixtureSuite('kit3');
handlerSuite('kit3');
environmentSuite('kit3');
