// The memory store's ring: growth, wrap-around, size smaller than the first allocation, ttl.
import assert from 'node:assert/strict';
import { test } from 'node:test';
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
      assert.deepEqual(data(last.envelopes), Array.from({ length: kept }, (_, k) => i - kept + 1 + k));
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
  assert.deepEqual(store.read('never', { since: { offset: 0, epoch: a.epoch } }, h), { offset: 0, epoch: a.epoch, recovered: true, envelopes: [] });
  assert.notEqual(new MemoryHistoryStore().epoch, store.epoch, 'a new store (a restart) is a new epoch');
});
