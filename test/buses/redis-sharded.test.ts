// Redis sharded pub/sub (SPUBLISH/SSUBSCRIBE) on a one-node Redis Cluster: the common bus suite.
import { busSuite } from './suite.ts';
import { redisHarness } from './redis-harness.ts';

busSuite(redisHarness(true));
