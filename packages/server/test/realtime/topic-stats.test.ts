// app.sockets() and app.topicStats(): what tools that look inside a running app read
// (@tachyon/dashboard). Real sockets subscribe over the protocol; the numbers must follow them.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { App, type HistoryStore } from '../../src/index.ts';
import { eventually, openWs, recordingLogger, start, type Running } from '../helpers.ts';

describe('app.sockets() and app.topicStats()', () => {
  let app: App;
  let running: Running;
  const log = recordingLogger();
  const failing: HistoryStore = {
    shared: false,
    append: () => ({ offset: 1, epoch: 'e', envelope: '{}' }),
    read: () => ({ offset: 0, epoch: 'e', recovered: false, envelopes: [] }),
    kept: () => Promise.reject(new Error('store down')),
  };
  before(async () => {
    app = new App({ logger: log.logger });
    app.topic('room:*', { presence: true, history: { size: 3 } });
    app.topic('log:*', { history: { size: 10, store: failing } });
    app.ws('/live', { upgrade: (req) => ({ id: req.query.user ?? 'anon' }) });
    running = await start(app);
  });
  after(() => running.close());

  it('lists open sockets and counts subscribers, presence members and kept history', async () => {
    assert.equal([...app.sockets()].length, 0);
    const a = await openWs(`ws://127.0.0.1:${running.port}/live?user=ann`);
    const b = await openWs(`ws://127.0.0.1:${running.port}/live?user=bob`);
    const c = await openWs(`ws://127.0.0.1:${running.port}/live?user=bob`); // bob's second tab: one member
    for (const [i, s] of [a, b, c].entries()) {
      s.ws.send(JSON.stringify({ type: 'subscribe', topic: 'room:1', ref: i + 1 }));
      await s.next((m) => m.type === 'subscribed');
    }
    const sockets = [...app.sockets()];
    assert.equal(sockets.length, 3);
    assert.deepEqual(
      sockets.map((s) => s.topics),
      [['room:1'], ['room:1'], ['room:1']],
    );
    for (let i = 0; i < 5; i++) app.publish('room:1', 'msg', i);
    assert.deepEqual(await app.topicStats('room:1'), { topic: 'room:1', subscribers: 3, presence: 2, history: 3 });
    // No presence or history declared: null, not 0.
    assert.deepEqual(await app.topicStats('other'), { topic: 'other', subscribers: 0, presence: null, history: null });
    c.ws.close();
    await eventually(() => [...app.sockets()].length === 2);
    assert.deepEqual(await app.topicStats('room:1'), { topic: 'room:1', subscribers: 2, presence: 2, history: 3 });
    a.ws.close();
    b.ws.close();
    await eventually(() => [...app.sockets()].length === 0);
  });

  it('a store whose kept() fails gives null and a log line, never a rejection', async () => {
    const stats = await app.topicStats('log:1');
    assert.deepEqual(stats, { topic: 'log:1', subscribers: 0, presence: null, history: null });
    const line = log.entries.find((e) => e.msg === 'history store kept() failed');
    assert.equal(line?.level, 'error');
    assert.equal((line?.obj as { topic?: string } | undefined)?.topic, 'log:1');
  });

  it('refuses a topic that is not a non-empty string', async () => {
    await assert.rejects(app.topicStats(''), /non-empty string/);
    await assert.rejects(app.topicStats(42 as unknown as string), /non-empty string/);
  });
});
