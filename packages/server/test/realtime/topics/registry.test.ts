import { test } from 'node:test';
import assert from 'node:assert/strict';
import { App } from '@tachyon/server';
import { TopicRegistry } from '../../../src/realtime/topics/index.ts';

test('topic patterns: exact names win, then the first declared pattern; * spans any characters', () => {
  const r = new TopicRegistry();
  assert.equal(r.active, false);
  r.define('room:*', { history: { size: 10 } });
  r.define('room:lobby', { presence: true });
  r.define('room:*:chat', { history: { size: 5, ttl: 1000 } });
  assert.equal(r.active, true);
  assert.equal(r.lookup('room:lobby')?.pattern, 'room:lobby');
  assert.equal(r.lookup('room:lobby')?.presence?.events, false); // presence: true is the defaults (presence/options.ts)
  assert.equal(r.lookup('room:lobby')?.history, null);
  assert.equal(r.lookup('room:1')?.history?.size, 10);
  assert.equal(r.lookup('room:1:chat')?.pattern, 'room:*', 'declared first');
  assert.equal(r.lookup('chat:1'), null);
  assert.equal(r.lookup('xroom:1'), null, 'anchored at the start');
});

test('topic patterns: regex characters in a pattern are literal', () => {
  const r = new TopicRegistry();
  r.define('a.b+*', { presence: true });
  assert.notEqual(r.lookup('a.b+1'), null);
  assert.equal(r.lookup('axb+1'), null);
  assert.equal(r.lookup('a.bb1'), null);
});

test('topic options are checked when declared', () => {
  const r = new TopicRegistry();
  assert.throws(() => r.define('', {}), /Invalid topic pattern/);
  assert.throws(() => r.define('a"b', {}), /Invalid topic pattern/);
  assert.throws(() => r.define('a', null as never), /options must be an object/);
  assert.throws(() => r.define('a', { history: { size: 0 } }), /history.size/);
  assert.throws(() => r.define('a', { history: { size: 1.5 } }), /history.size/);
  assert.throws(() => r.define('a', { history: { size: 1, ttl: -1 } }), /history.ttl/);
  assert.throws(() => r.define('a', { presence: 'yes' as never }), /presence must be/);
  r.define('a', {});
  assert.throws(() => r.define('a', {}), /already declared/);
});

test('app.topic() before listen, not after', async () => {
  const app = new App();
  assert.equal(app.topic('room:*', { history: { size: 100, ttl: 120_000 }, presence: true }), app);
  await app.listen(0);
  try {
    assert.throws(() => app.topic('other:*', {}), /before listen/);
  } finally {
    await app.close();
  }
});
