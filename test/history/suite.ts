// The behaviour every history store must have (memory, Redis), run by each against the real
// thing, with a real Tachyon server and real @tachyon/client clients: one suite, many stores.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type HistoryStore, MemoryHistoryStore } from '../../packages/server/src/index.ts';
import { range, rawClient, sleep, startServer, subscriber, waitFor } from './harness.ts';

export interface StoreHarness {
  name: string;
  before?(): Promise<void>;
  after?(): Promise<void>;
  /** A store for one server (undefined: the default memory store). */
  store(): HistoryStore | undefined;
}

export function historySuite(h: StoreHarness): void {
  describe(`history (${h.name}): behaviour`, () => {
    before(() => h.before?.());
    after(() => h.after?.());

    test('disconnected while 50 are published: on reconnect all 50 arrive once, in order, then live traffic', async () => {
      const s = await startServer({ store: h.store() });
      try {
        const sub = await subscriber(s.url, 'room:a');
        for (let i = 0; i < 5; i++) s.app.publish('room:a', 'n', i);
        await waitFor(() => sub.got.length === 5, 'live before the drop');
        s.dropAll();
        for (let i = 5; i < 55; i++) s.app.publish('room:a', 'n', i);
        await waitFor(() => sub.infos.length === 2, 'resubscribed');
        assert.deepEqual(sub.infos[1], { recovering: true, recovered: true, offset: 55, epoch: sub.infos[0]!.epoch });
        for (let i = 55; i < 60; i++) s.app.publish('room:a', 'n', i);
        await waitFor(() => sub.got.length >= 60, 'live after the replay');
        await sleep(50);
        assert.deepEqual(sub.got, range(0, 60));
        assert.equal(sub.infos[0]!.recovering, false);
        assert.equal(sub.infos[0]!.recovered, false);
        sub.close();
      } finally {
        await s.close();
      }
    });

    test('publishes racing the replay: no gap and no duplicate across the replay/live boundary', async () => {
      const s = await startServer({ store: h.store(), size: 100_000 });
      try {
        const sub = await subscriber(s.url, 'room:race');
        let n = 0;
        let on = true;
        // A publisher that never pauses for long (one publish per event-loop turn), whatever the
        // client does: publishes land while a recovery's read is in flight.
        const pump = async () => {
          while (on) {
            s.app.publish('room:race', 'n', n++);
            await new Promise((r) => setImmediate(r));
          }
        };
        const pumping = pump();
        try {
          for (let drop = 0; drop < 5; drop++) {
            await sleep(30);
            const before = sub.infos.length;
            s.dropAll();
            await waitFor(() => sub.infos.length === before + 1, 'resubscribed');
            assert.equal(sub.infos.at(-1)!.recovered, true, JSON.stringify({ info: sub.infos.at(-1), n, log: s.log.slice(-2) }));
          }
          await sleep(30);
        } finally {
          on = false;
          await pumping;
        }
        try {
          await waitFor(() => sub.got.length >= n, 'every publish', 10_000);
          await sleep(50);
          const missing = range(0, n).filter((i) => !sub.got.includes(i));
          assert.deepEqual(sub.got, range(0, n), `${n} publishes, 5 reconnects; missing ${missing.slice(0, 10)}`);
        } finally {
          sub.close();
        }
      } finally {
        await s.close();
      }
    });

    test('a publish from a socket gets a position too, and is recovered like any other', async () => {
      const s = await startServer({ store: h.store() });
      try {
        const sub = await subscriber(s.url, 'room:say');
        const talker = await subscriber(s.url, 'lobby');
        await talker.live.request('say', 1);
        await waitFor(() => sub.got.length === 1, 'live');
        s.dropAll();
        await sleep(1);
        const talker2 = await subscriber(s.url, 'lobby');
        await talker2.live.request('say', 2);
        await talker2.live.request('say', 3);
        await waitFor(() => sub.got.length === 3 && sub.infos.length >= 2, 'recovered');
        assert.deepEqual(sub.got, [1, 2, 3]);
        assert.equal(sub.infos.at(-1)!.recovered, true);
        for (const x of [sub, talker, talker2]) x.close();
      } finally {
        await s.close();
      }
    });

    test("a socket's own publish reaches it as its position alone: the next message is no gap, nothing replayed", async () => {
      const s = await startServer({ store: h.store() });
      try {
        const talker = await subscriber(s.url, 'room:say');
        await talker.live.request('say', 1);
        s.app.publish('room:say', 'n', 2);
        await waitFor(() => talker.got.length === 1, 'the app publish');
        await sleep(100);
        assert.deepEqual(talker.got, [2], 'its own message is not replayed to it');
        assert.equal(talker.infos.length, 1, 'no resubscribe: the position moved past its own message');
        talker.close();
      } finally {
        await s.close();
      }
    });

    test('recovery is refused past the window (size): the subscriber is told recovered: false, then gets live traffic', async () => {
      const s = await startServer({ store: h.store(), size: 10 });
      try {
        const sub = await subscriber(s.url, 'room:window');
        s.app.publish('room:window', 'n', 0);
        await waitFor(() => sub.got.length === 1, 'live');
        s.dropAll();
        for (let i = 1; i <= 30; i++) s.app.publish('room:window', 'n', i);
        await waitFor(() => sub.infos.length === 2, 'resubscribed');
        assert.equal(sub.infos[1]!.recovering, true);
        assert.equal(sub.infos[1]!.recovered, false);
        assert.equal(sub.infos[1]!.offset, 31);
        assert.deepEqual(sub.got, [0], 'nothing replayed: the app refetches');
        s.app.publish('room:window', 'n', 31);
        await waitFor(() => sub.got.length === 2, 'live');
        assert.deepEqual(sub.got, [0, 31]);
        assert.ok(
          s.log.some((e) => e.msg === 'history: recovery refused' && e.obj.reason === 'window'),
          'logged',
        );
        // The next reconnect resumes from the new position.
        s.dropAll();
        s.app.publish('room:window', 'n', 32);
        await waitFor(() => sub.infos.length === 3 && sub.got.length === 3, 'recovered again');
        assert.equal(sub.infos[2]!.recovered, true);
        sub.close();
      } finally {
        await s.close();
      }
    });

    test('recovery is refused past the window (ttl), and granted within it', async () => {
      const s = await startServer({ store: h.store(), ttl: 150 });
      try {
        const c = await rawClient(s.url);
        c.send({ type: 'subscribe', topic: 'room:ttl', ref: 1 });
        const at = await c.next((m) => m.type === 'subscribed');
        c.close();
        s.app.publish('room:ttl', 'n', 1);
        await sleep(20);
        const soon = await rawClient(s.url);
        soon.send({ type: 'subscribe', topic: 'room:ttl', since: { offset: at.offset, epoch: at.epoch }, ref: 2 });
        assert.deepEqual(await soon.next(() => true), { topic: 'room:ttl', event: 'n', offset: at.offset + 1, epoch: at.epoch, data: 1 });
        assert.equal((await soon.next(() => true)).recovered, true);
        soon.close();
        await sleep(250);
        const late = await rawClient(s.url);
        late.send({ type: 'subscribe', topic: 'room:ttl', since: { offset: at.offset, epoch: at.epoch }, ref: 3 });
        const answer = await late.next(() => true);
        assert.equal(answer.type, 'subscribed');
        assert.equal(answer.recovered, false, 'the message expired: not recoverable');
        late.close();
      } finally {
        await s.close();
      }
    });

    test('a hostile since (wrong epoch, ahead of the topic) is refused cleanly: recovered false, a log line, the socket keeps working', async () => {
      const s = await startServer({ store: h.store() });
      try {
        s.app.publish('room:evil', 'n', 0);
        await sleep(20);
        const c = await rawClient(s.url);
        c.send({ type: 'subscribe', topic: 'room:evil', ref: 1 });
        const at = await c.next((m) => m.ref === 1);
        assert.equal(at.offset, 1);
        c.send({ type: 'unsubscribe', topic: 'room:evil' });
        c.send({ type: 'subscribe', topic: 'room:evil', since: { offset: 0, epoch: 'AAAAAAAAAAA' }, ref: 2 });
        assert.deepEqual(await c.next((m) => m.ref === 2), {
          type: 'subscribed',
          topic: 'room:evil',
          ref: 2,
          offset: 1,
          epoch: at.epoch,
          recovered: false,
        });
        c.send({ type: 'unsubscribe', topic: 'room:evil' });
        c.send({ type: 'subscribe', topic: 'room:evil', since: { offset: Number.MAX_SAFE_INTEGER, epoch: at.epoch }, ref: 3 });
        assert.deepEqual(await c.next((m) => m.ref === 3), {
          type: 'subscribed',
          topic: 'room:evil',
          ref: 3,
          offset: 1,
          epoch: at.epoch,
          recovered: false,
        });
        await waitFor(() => s.log.some((e) => e.msg === 'history: recovery refused' && e.obj.reason === 'epoch'), 'epoch logged');
        await waitFor(() => s.log.some((e) => e.level === 'warn' && e.obj.reason === 'ahead'), 'ahead logged');
        s.app.publish('room:evil', 'n', 1);
        assert.equal((await c.next((m) => m.event === 'n')).offset, 2, 'subscribed and live');
        c.close();
      } finally {
        await s.close();
      }
    });

    // A gap while connected: the store numbered messages that never reached this server (a bus
    // that dropped them). Appending to the store directly, without a delivery, leaves exactly that.
    test('a gap seen while connected (the bus lost 3): the client asks for the range, gets all once, in order', async () => {
      const store = h.store() ?? new MemoryHistoryStore();
      const s = await startServer({ store });
      try {
        const sub = await subscriber(s.url, 'room:gap');
        for (let i = 0; i < 5; i++) s.app.publish('room:gap', 'n', i);
        await waitFor(() => sub.got.length === 5, 'live before the gap');
        for (let i = 5; i < 8; i++) await store.append('room:gap', 'n', String(i), { size: 100, store });
        s.app.publish('room:gap', 'n', 8); // offset 9 after 5: the client sees the gap
        await waitFor(() => sub.infos.length === 2 && sub.got.length === 9, 'the gap recovered');
        assert.deepEqual(sub.infos[1], { recovering: true, recovered: true, offset: 9, epoch: sub.infos[0]!.epoch });
        for (let i = 9; i < 12; i++) s.app.publish('room:gap', 'n', i);
        await waitFor(() => sub.got.length >= 12, 'live after the recovery');
        await sleep(50);
        assert.deepEqual(sub.got, range(0, 12), 'no message lost, none twice');
        // A second gap later: recovered the same way.
        await store.append('room:gap', 'n', '12', { size: 100, store });
        s.app.publish('room:gap', 'n', 13);
        await waitFor(() => sub.infos.length === 3 && sub.got.length === 14, 'the second gap recovered');
        assert.deepEqual(sub.got, range(0, 14));
        sub.close();
      } finally {
        await s.close();
      }
    });

    test('a gap past the window while connected: recovered false (the app refetches), then live traffic', async () => {
      const store = h.store() ?? new MemoryHistoryStore();
      const s = await startServer({ store, size: 3 });
      try {
        const sub = await subscriber(s.url, 'room:gapwin');
        s.app.publish('room:gapwin', 'n', 0);
        await waitFor(() => sub.got.length === 1, 'live');
        for (let i = 1; i <= 5; i++) await store.append('room:gapwin', 'n', String(i), { size: 3, store });
        s.app.publish('room:gapwin', 'n', 6);
        await waitFor(() => sub.infos.length === 2, 'resubscribed after the gap');
        assert.deepEqual(sub.infos[1], { recovering: true, recovered: false, offset: 7, epoch: sub.infos[0]!.epoch });
        s.app.publish('room:gapwin', 'n', 7);
        await waitFor(() => sub.got.length === 2, 'live after');
        await sleep(50);
        assert.deepEqual(sub.got, [0, 7], 'nothing of the lost range, told so; then live traffic');
        assert.ok(s.log.some((e) => e.msg === 'history: recovery refused' && e.obj.reason === 'window'));
        sub.close();
      } finally {
        await s.close();
      }
    });

    test('a fresh subscribe can ask for the last N messages (capped by size), then gets live traffic', async () => {
      const s = await startServer({ store: h.store(), size: 30 });
      try {
        for (let i = 0; i < 50; i++) s.app.publish('room:last', 'n', i);
        await sleep(50); // asynchronous stores have appended
        const five = await subscriber(s.url, 'room:last', { last: 5 });
        assert.deepEqual(five.got, [45, 46, 47, 48, 49]);
        assert.deepEqual(five.infos[0], { recovering: false, recovered: false, offset: 50, epoch: five.infos[0]!.epoch });
        const all = await subscriber(s.url, 'room:last', { last: 1000 });
        assert.deepEqual(all.got, range(20, 50), 'capped at size');
        const none = await subscriber(s.url, 'room:last');
        assert.deepEqual(none.got, []);
        s.app.publish('room:last', 'n', 50);
        await waitFor(() => five.got.length === 6 && all.got.length === 31 && none.got.length === 1, 'live');
        for (const x of [five, all, none]) x.close();
      } finally {
        await s.close();
      }
    });
  });
}
