// Fuzz finding (fuzz/targets/redis-history.mjs): with a ttl and servers whose clocks disagree,
// an expired-looking entry between kept ones was dropped and the read still said `recovered`.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { readBack, type ReadReply } from '../src/history.ts';

const now = 1_000_000;
const entry = (offset: number, time: number): [string, string[]] => [`${offset}-0`, ['t', String(time), 'e', 'move']];

test('clock skew: a resubscribe is recovered without a gap, or not at all', () => {
  // Offsets 1..5; offset 3 was appended by a server whose clock is 10 s behind (looks expired).
  const stream = [entry(1, now - 100), entry(2, now - 90), entry(3, now - 10_000), entry(4, now - 50), entry(5, now - 10)];
  const read = readBack('room', { since: { offset: 0, epoch: 'E' } }, { size: 100, ttl: 5000 }, [5, 'E', stream] as ReadReply, now);
  assert.equal(read.recovered, true);
  assert.deepEqual(
    read.envelopes.map((e) => JSON.parse(e).offset),
    [1, 2, 3, 4, 5],
  );
  // `last`: the newest run of kept entries, never one with a hole.
  const last = readBack('room', { last: 5 }, { size: 100, ttl: 5000 }, [5, 'E', stream.slice().reverse()] as ReadReply, now);
  assert.deepEqual(
    last.envelopes.map((e) => JSON.parse(e).offset),
    [4, 5],
  );
  // An expired run at the old end is still dropped.
  const old = [entry(1, now - 9000), entry(2, now - 8000), entry(3, now - 10)];
  const r = readBack('room', { since: { offset: 0, epoch: 'E' } }, { size: 100, ttl: 5000 }, [3, 'E', old] as ReadReply, now);
  assert.equal(r.recovered, false);
  assert.equal(r.reason, 'window');
});
