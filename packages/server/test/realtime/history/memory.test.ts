// The memory store's ring: growth, wrap-around, size smaller than the first allocation, ttl;
// forgetting idle topics.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { MemoryHistoryStore } from '../../../src/realtime/history/index.ts';

const data = (envelopes: readonly string[]) => envelopes.map((e) => JSON.parse(e).data);

for (const size of [1, 3, 8, 9, 100]) {
  test(`memory store, size ${size}: keeps the last ${size} in order through growth and wrap-around`, () => {
    const store = new MemoryHistoryStore();
    const h = { size };
    for (let i = 1; i <= 250; i++) {
      const a = store.append('t', 'n', String(i), h);
      assert.equal(a.offset, i);
      const kept = Math.min(i, size);
      const last = store.read('t', { last: size }, h);
      assert.deepEqual(
        data(last.envelopes),
        Array.from({ length: kept }, (_, k) => i - kept + 1 + k),
      );
      // Recovery from the oldest position still kept works; one before it is outside the window.
      const since = i - kept;
      assert.equal(store.read('t', { since: { offset: since, epoch: a.epoch } }, h).recovered, true);
      if (since > 0) assert.equal(store.read('t', { since: { offset: since - 1, epoch: a.epoch } }, h).reason, 'window');
    }
  });
}

test('memory store: ttl drops old messages from replays; positions and epochs are checked', async () => {
  const store = new MemoryHistoryStore();
  const h = { size: 10, ttl: 30 };
  const a = store.append('t', 'n', '1', h);
  await new Promise((r) => setTimeout(r, 50));
  store.append('t', 'n', '2', h);
  assert.deepEqual(data(store.read('t', { last: 10 }, h).envelopes), [2]);
  assert.equal(store.read('t', { since: { offset: 0, epoch: a.epoch } }, h).reason, 'window');
  assert.deepEqual(data(store.read('t', { since: { offset: 1, epoch: a.epoch } }, h).envelopes), [2]);
  assert.equal(store.read('t', { since: { offset: 3, epoch: a.epoch } }, h).reason, 'ahead');
  assert.equal(store.read('t', { since: { offset: 1, epoch: 'other' } }, h).reason, 'epoch');
  assert.deepEqual(store.read('never', { since: { offset: 0, epoch: a.epoch } }, h), {
    offset: 0,
    epoch: a.epoch,
    recovered: true,
    envelopes: [],
  });
  assert.notEqual(new MemoryHistoryStore().epoch, store.epoch, 'a new store (a restart) is a new epoch');
});

// Topics come and go (a room per game): with a ttl, an idle topic is forgotten, so the store
// stays as big as the topics in use. Without one, a topic is kept (its window is `size` only).
setFlagsFromString('--expose-gc'); // gc() without --expose-gc on the command line
const gc = runInNewContext('gc') as () => void;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

test('memory store: topics idle for longer than their ttl are forgotten; a position on one is refused, never taken for a new numbering', async () => {
  const store = new MemoryHistoryStore();
  const short = { size: 10, ttl: 20 };
  const kept = { size: 10 };
  const old = store.append('room:old', 'n', '1', short);
  store.append('room:old', 'n', '2', short);
  store.append('forever', 'n', '1', kept);
  for (let i = 0; i < 1000; i++) store.append(`room:${i}`, 'n', '1', short);
  assert.equal(store.topics, 1002);
  await sleep(40);
  // New topics: the sweep runs when the store reaches 1024 topics (after 22 of them).
  const fresh = [];
  for (let i = 0; i < 30; i++) fresh.push(store.append(`live:${i}`, 'n', '1', short));
  assert.equal(store.topics, 31, 'the idle topics are gone; the one without ttl and the new ones stay');
  assert.equal(fresh[0]!.epoch, old.epoch, 'created before any sweep: the store epoch');
  assert.notEqual(fresh[29]!.epoch, old.epoch, 'created after a sweep forgot topics: an epoch of its own');
  // The forgotten topic starts over with its own epoch: the old position is refused.
  const again = store.append('room:old', 'n', 'new', short);
  assert.equal(again.offset, 1);
  assert.notEqual(again.epoch, old.epoch);
  const read = store.read('room:old', { since: { offset: 1, epoch: old.epoch } }, short);
  assert.equal(read.recovered, false);
  assert.equal(read.reason, 'epoch');
  // A forgotten topic not used since: the position is ahead of nothing, refused too.
  assert.equal(store.read('room:7', { since: { offset: 1, epoch: old.epoch } }, short).reason, 'ahead');
  // The topic without ttl kept its history.
  assert.deepEqual(data(store.read('forever', { last: 10 }, kept).envelopes), [1]);
});

test('memory store: a stream of short-lived topics keeps memory bounded (checked after gc)', async () => {
  const store = new MemoryHistoryStore();
  const h = { size: 50, ttl: 10 };
  const payload = JSON.stringify('x'.repeat(200));
  const round = async (r: number) => {
    for (let i = 0; i < 2000; i++) for (let k = 0; k < 5; k++) store.append(`game:${r}:${i}`, 'n', payload, h);
    await sleep(15);
  };
  await round(0);
  gc();
  const base = process.memoryUsage().heapUsed;
  for (let r = 1; r <= 20; r++) await round(r); // 40 000 topics, 200 000 messages
  gc();
  const grown = process.memoryUsage().heapUsed - base;
  assert.ok(store.topics <= 4096, `topics kept: ${store.topics}`);
  assert.ok(grown < 8 * 1024 * 1024, `heap grew by ${(grown / 1048576).toFixed(1)} MiB`);
});
