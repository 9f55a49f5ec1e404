// app.requestAll() across servers over a real broker (Redis, NATS): two Tachyon servers in
// their own processes, 1,000 real WebSocket clients spread over them, some slow (they answer
// after the timeout), some gone (they close when asked). The asking server's result must be
// exact: who replied, who is missing and why, ids unique and naming the server. Forged and
// garbled requestAll frames on the broker are dropped with a log line and change nothing; a
// server that dies is not an error.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { connect, type Live } from '@tachyon/client';
import type { Broker } from './brokers.ts';
import { natsHarness } from './nats-harness.ts';
import { sleep, TachyonNode, waitFor, type RequestAllOutcome } from './node.ts';
import { redisHarness } from './redis-harness.ts';
import { frame, type Harness } from './suite.ts';

const CLIENTS = 1000;
const TIMEOUT = 1500;
/** Client i: slow on i % 20 in {1, 2}, gone on {3, 4}: 50 of each per server (even i on a, odd on b). */
const kind = (i: number) => (i % 20 === 1 || i % 20 === 2 ? 'slow' : i % 20 === 3 || i % 20 === 4 ? 'gone' : 'ok');
/** 4 KiB frames: a server's 500 answers (about 20 KiB) travel in several parts. */
const CONFIG = { presenceInterval: 1000, maxMessageSize: 4096 };
const ID = /^([0-9a-f]{12}):0:(\d+)$/;

/** Checks one outcome against the clients still connected (`alive`: indexes); the asker's clients are the `parity` ones (a: 0, b: 1). */
function assertExact(r: RequestAllOutcome, alive: number[], data: unknown, parity = 0): void {
  const expected = alive.filter((i) => kind(i) === 'ok');
  const got = r.replies.map((x) => (x.data as { i: number }).i).sort((p, q) => p - q);
  assert.deepEqual(got, expected, 'exactly the clients that answer in time replied');
  for (const x of r.replies) assert.deepEqual((x.data as { echo: unknown }).echo, data);
  const ids = [...r.replies, ...r.missing].map((x) => x.id);
  assert.equal(new Set(ids).size, ids.length, 'ids unique across servers');
  for (const id of ids) assert.match(id, ID);
  // Replies from the asker's clients carry its server, the other's another one.
  for (const x of r.replies) assert.equal(x.id.match(ID)![1] === r.server, (x.data as { i: number }).i % 2 === parity, x.id);
  const servers = new Set(ids.map((id) => id.match(ID)![1]!));
  for (const server of servers) {
    const codes = r.missing.filter((m) => m.id.startsWith(server)).map((m) => m.code);
    const on = alive.filter((i) => (i % 2 === parity) === (server === r.server));
    assert.equal(codes.filter((c) => c === 'TIMEOUT').length, on.filter((i) => kind(i) === 'slow').length, `TIMEOUTs on ${server}`);
    assert.equal(codes.filter((c) => c === 'CLOSED').length, on.filter((i) => kind(i) === 'gone').length, `CLOSEDs on ${server}`);
    assert.equal(codes.length, on.length - on.filter((i) => kind(i) === 'ok').length);
  }
}

function requestAllAcrossServers(h: Harness): void {
  describe(`${h.name}: app.requestAll() across servers`, () => {
    let broker: Broker;
    let a: TachyonNode, b: TachyonNode;
    const clients: Live[] = [];
    before(async () => {
      broker = await h.startBroker();
      [a, b] = (await Promise.all([0, 1].map(() => TachyonNode.start(h.config(broker, CONFIG))))) as [TachyonNode, TachyonNode];
      await waitFor(async () => (await Promise.all([a, b].map((n) => n.stats()))).every((s) => s.connected), 'connected');
      for (let i = 0; i < CLIENTS; i++) {
        const live = connect(`ws://127.0.0.1:${(i % 2 === 0 ? a : b).port}/ws`);
        live.subscribe('room', () => {});
        live.handle('ack', async (data: unknown) => {
          if (kind(i) === 'slow') await sleep(TIMEOUT + 1000);
          if (kind(i) === 'gone') {
            live.close();
            return new Promise(() => {});
          }
          return { i, echo: data };
        });
        clients.push(live);
      }
      await Promise.all(clients.map((c) => c.ready));
      // Both servers count every subscriber: each knows (presence) that the other has some.
      await waitFor(
        async () => (await Promise.all([a, b].map((n) => n.subscribers('room')))).every((c) => c.total === CLIENTS && c.local === 500),
        'every subscriber counted on both servers',
        20_000,
      );
    });
    after(async () => {
      for (const c of clients) c.close();
      await Promise.all([a, b].map((n) => n?.close()));
      await broker?.dispose();
    });

    test('1,000 clients over two servers, slow and gone among them: replies and missing exact', async () => {
      const r = await a.requestAll('room', 'ack', { q: 1 }, TIMEOUT);
      assert.equal(r.replies.length, 800);
      assert.equal(r.missing.length, 200);
      assertExact(r, [...Array(CLIENTS).keys()], { q: 1 });
      assert.ok(!a.logged(/did not answer/), 'b answered: a did not wait for its margin');
      // Asked from the other side, the gone clients are gone: CLOSED no more, simply not there.
      const back = await b.requestAll('room', 'ack', 'again', TIMEOUT);
      const alive = [...Array(CLIENTS).keys()].filter((i) => kind(i) !== 'gone');
      assertExact(back, alive, 'again', 1);
      assert.equal(back.replies.length, 800);
      assert.equal(back.missing.length, 100);
    });

    test('forged and garbled requestAll frames on the broker are dropped with a log line, the result stays exact', async () => {
      const control = await h.listen(broker, null);
      try {
        const before = [(await a.stats()).rejected, (await b.stats()).rejected];
        const pending = a.requestAll('room', 'ack', { q: 2 }, TIMEOUT);
        // a's Ask on the control channel names a's origin, hence its reply channel, and the ask id.
        await waitFor(() => control.frames.some((f) => f[2] === 3), "a's ask on the control channel");
        const ask = control.frames.find((f) => f[2] === 3)!;
        const reply = `"answers:${ask.subarray(3, 11).toString('hex')}"`;
        const id = JSON.parse(ask.subarray(11).toString()).id as number;
        const forged = [
          frame(4, 'not json at all'),
          frame(4, JSON.stringify({ ask: id, part: 0, parts: 1, replies: [{ data: 'no id' }], missing: [] })),
          frame(4, JSON.stringify({ ask: id, part: 0, parts: 1, replies: [], missing: [{ id: 'x', code: 'EVIL', message: '' }] })),
          frame(4, JSON.stringify({ ask: id, part: 3, parts: 2, replies: [{ id: 'x', data: 1 }], missing: [] })),
          frame(0, JSON.stringify({ topic: 'room', event: 'spoof' })),
          Buffer.from('garbage'),
        ];
        for (const f of forged) await h.inject(broker, reply, f);
        // A garbled ask reaches both servers; neither answers it.
        await h.inject(broker, null, frame(3, JSON.stringify({ id: 'one', topic: 'room', event: 'ack', timeout: -1 })));
        const r = await pending;
        assertExact(
          r,
          [...Array(CLIENTS).keys()].filter((i) => kind(i) !== 'gone'),
          { q: 2 },
        );
        await waitFor(async () => (await a.stats()).rejected === before[0]! + forged.length + 1, 'a rejected every forged frame');
        await waitFor(async () => (await b.stats()).rejected === before[1]! + 1, 'b rejected the garbled ask');
        assert.ok(a.logged(/dropped a bad message/));
        assert.ok(
          a.log.some((l) => /malformed requestAll answer/.test(String(l.reason))),
          'the reason is logged',
        );
        assert.ok(a.alive && b.alive);
      } finally {
        await control.stop();
      }
    });

    test('a server that dies is not an error: its subscribers are in neither list, a warning says so', async () => {
      b.kill();
      const r = await a.requestAll('room', 'ack', { q: 3 }, 300);
      const mine = [...Array(CLIENTS).keys()].filter((i) => i % 2 === 0 && kind(i) !== 'gone');
      assert.deepEqual(
        r.replies.map((x) => (x.data as { i: number }).i).sort((p, q) => p - q),
        mine.filter((i) => kind(i) === 'ok'),
      );
      assert.ok(r.replies.every((x) => x.id.startsWith(r.server)));
      assert.ok(r.ms >= 300 + 2000 - 50, `waited for the dead server until the margin (${r.ms} ms)`);
      await waitFor(() => a.logged(/servers did not answer in time/), 'the warning');
    });
  });
}

requestAllAcrossServers(redisHarness(false));
requestAllAcrossServers(natsHarness);
