// The history store across a Redis killed (SIGKILL) and restarted under a stream of appends:
// each append settles (a position, or a failure that sends the message out live without one)
// in the order it was made. The history engine delivers a publish when its append settles,
// so an append that settled after later ones would reach every client out of order. That
// happened: node-redis kept the commands it had not written yet when the connection dropped
// and wrote them after the reconnect, where they took positions in the new numbering after
// the publishes that had gone out live meanwhile (seen once in CI, test/buses/faults.test.ts).
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { RedisBroker } from '../../../test/buses/brokers.ts';
import { sleep, waitFor } from '../../../test/buses/fault-node.ts';
import { redisHistory } from '../src/index.ts';

let redis: RedisBroker;
before(async () => {
  redis = await RedisBroker.start();
});
after(() => redis.dispose());

const OPTIONS = { size: 1000 };

test('appends settle in the order they were made across a SIGKILL and a restart; none waits for the old connection', async () => {
  const store = redisHistory({ url: redis.url, prefix: 'restart:' });
  const settled: number[] = [];
  const kept: number[] = [];
  let n = 0;
  let stop = false;
  // A few appends every turn of the event loop: some are always made but not yet written
  // when the connection drops (node-redis writes in a setImmediate).
  const loop = (async () => {
    while (!stop) {
      for (let k = 0; k < 4; k++) {
        const i = n++;
        store.append('room:1', 'n', String(i), OPTIONS).then(
          () => void (settled.push(i), kept.push(i)),
          () => void settled.push(i),
        );
      }
      await new Promise<void>((go) => setImmediate(go));
    }
  })();
  try {
    await waitFor(() => kept.length > 200, 'appends kept before the kill');
    await redis.stop(); // SIGKILL
    const killedAt = n;
    await waitFor(() => !store.stats().connected, 'the store sees Redis gone');
    await sleep(200);
    const failedWhileAway = settled.filter((i) => i >= killedAt && !kept.includes(i)).length;
    await redis.start();
    await waitFor(() => store.stats().connected, 'the store reconnects', 15_000);
    const back = kept.length;
    await waitFor(() => kept.length > back + 200, 'appends kept again after the restart');
    stop = true;
    await loop;
    await waitFor(() => settled.length === n, `every append settles (${settled.length} of ${n})`);
    const i = settled.findIndex((x, j) => j > 0 && x < settled[j - 1]!);
    assert.equal(
      i,
      -1,
      `settled out of order: ${settled[i - 1]} then ${settled[i]}, around ${settled.slice(Math.max(0, i - 5), i + 5).join(' ')}`,
    );
    assert.ok(failedWhileAway > 0, 'appends made while Redis was away failed at once');
    // The restarted Redis (no persistence) numbers from 1 again: a new epoch, positions in order.
    const read = await store.read('room:1', { last: 1000 }, OPTIONS);
    const values = read.envelopes.map((e) => Number(JSON.parse(e).data));
    assert.deepEqual(
      values,
      [...values].sort((a, b) => a - b),
      'the new history holds its appends in the order made',
    );
    assert.ok(
      values.every((v) => v >= killedAt),
      'nothing from before the kill came back into the new history',
    );
  } finally {
    stop = true;
    await loop;
    await store.close?.();
  }
});
