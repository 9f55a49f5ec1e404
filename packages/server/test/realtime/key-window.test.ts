// core/key-window.ts: the bounded, time-limited idempotency keys that realtime/once.ts keeps per
// route and cluster/once-exchange.ts keeps in the primary for every worker.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { KeyWindow } from '../../src/core/key-window.ts';

type E = { at: number; done: boolean };
const windowOf = (window: number, keys: number) => new KeyWindow<E>({ window, keys }, (e) => e.done);

test('a settled key is found within its window and forgotten after it', () => {
  const w = windowOf(100, 10);
  w.add('a', { at: 0, done: true });
  assert.deepEqual(w.find('a', 99), { at: 0, done: true });
  assert.equal(w.find('a', 100), undefined);
  assert.equal(w.size, 0);
});

test('a key still running is never forgotten by time, and holds back the sweep behind it', () => {
  const w = windowOf(100, 10);
  w.add('running', { at: 0, done: false });
  w.add('later', { at: 1, done: true });
  assert.equal(w.find('other', 500), undefined);
  assert.equal(w.size, 2, 'the sweep stops at the running key');
  assert.deepEqual(w.find('running', 500), { at: 0, done: false });
  assert.equal(w.find('later', 500), undefined, 'expired itself, found past its window');
});

test('past `keys` the oldest is forgotten; re-adding a key moves it to the back', () => {
  const w = windowOf(1000, 2);
  w.add('a', { at: 0, done: false });
  w.add('b', { at: 1, done: false });
  w.add('a', { at: 2, done: false });
  w.add('c', { at: 3, done: false });
  assert.equal(w.size, 2);
  assert.equal(w.get('b'), undefined, 'b was the oldest');
  assert.deepEqual(
    [...w].map(([k]) => k),
    ['a', 'c'],
  );
});
