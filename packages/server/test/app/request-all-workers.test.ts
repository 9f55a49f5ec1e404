// app.requestAll() across workers, the parts a two-worker cluster test cannot provoke on
// demand: a worker that cannot answer (restarting: its port is down) is logged and skipped,
// never a rejection; bad arguments still throw at once. The real Rpc, with no running peer.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Rpc } from '../../src/core/rpc.ts';
import { WsHub } from '../../src/realtime/hub.ts';
import { requestAllWorkers, REQUEST_ALL_CHANNEL, serveRequestAll } from '../../src/app/request-all-workers.ts';
import { recordingLogger } from '../helpers.ts';

test('a worker that is not running is logged and skipped: its subscribers are in neither list', async () => {
  const log = recordingLogger();
  const place = { worker: 1, workers: 3, hub: new WsHub() };
  const down = new Rpc(1, () => false); // every peer restarting
  const result = await requestAllWorkers(down, place, undefined, log.logger, 'room', 'ack', { n: 1 }, { timeout: 100 });
  assert.deepEqual(result, { replies: [], missing: [] });
  const warned = log.entries.filter((e) => e.level === 'warn');
  assert.deepEqual(
    warned.map((e) => (e.obj as { worker: number }).worker),
    [2, 3],
  );
  assert.match(warned[0]!.msg!, /a worker did not answer/);
});

test('bad arguments throw at once, before any worker is asked', () => {
  let posted = 0;
  const rpc = new Rpc(1, () => ++posted > 0);
  const place = { worker: 1, workers: 2, hub: new WsHub() };
  const ask = (topic: string, event: string, data?: unknown, timeout?: number) =>
    requestAllWorkers(rpc, place, undefined, recordingLogger().logger, topic, event, data, { timeout });
  assert.throws(() => ask('bad topic', 'ack'), TypeError);
  assert.throws(() => ask('room', 'bad name'), TypeError);
  assert.throws(() => ask('room', 'ack', { n: 1n }), TypeError);
  assert.throws(() => ask('room', 'ack', {}, -1), TypeError);
  assert.equal(posted, 0);
});

test('a worker answers with its own subscribers over the channel (none here: empty lists)', async () => {
  // Two Rpcs wired to each other, as two threads' are (structured clones through a port).
  const one: Rpc = new Rpc(1, (to, m) => (queueMicrotask(() => two.receive(1, structuredClone(m))), to === 2));
  const two: Rpc = new Rpc(2, (to, m) => (queueMicrotask(() => one.receive(2, structuredClone(m))), to === 1));
  serveRequestAll(two, { worker: 2, workers: 2, hub: new WsHub() }, undefined);
  assert.ok(two.has(REQUEST_ALL_CHANNEL));
  const log = recordingLogger();
  const result = await requestAllWorkers(
    one,
    { worker: 1, workers: 2, hub: new WsHub() },
    undefined,
    log.logger,
    'room',
    'ack',
    { n: 1 },
    {},
  );
  assert.deepEqual(result, { replies: [], missing: [] });
  assert.equal(log.entries.length, 0, 'worker 2 answered');
});
