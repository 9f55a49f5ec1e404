// NATS core pub/sub: the common bus suite against a real nats-server.
import { natsHarness } from './nats-harness.ts';
import { busSuite } from './suite.ts';

busSuite(natsHarness);
