// The behaviour every broker bus must have (Redis classic, Redis sharded, NATS), run by each
// of them against its real broker, with Tachyon servers in separate processes and real
// WebSocket clients: one suite, many buses, like Hono's common.case.test.ts.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Broker } from './brokers.ts';
import { range, sleep, TachyonNode, waitFor, type BusConfig } from './node.ts';

export interface Harness {
  name: string;
  startBroker(): Promise<Broker>;
  unstartedBroker(): Promise<Broker>;
  /** The bus config for a server on `broker` (prefix and limits in `extra`). */
  config(broker: Broker, extra?: Record<string, unknown>): BusConfig;
  /** Publishes raw bytes on a topic's channel (null: the presence channel), as a foreign client would. */
  inject(broker: Broker, topic: string | null, bytes: Buffer, prefix?: string): Promise<void>;
  /** Records the raw frames on a channel (null: the presence channel), as a foreign client would; stop() unsubscribes. */
  listen(broker: Broker, topic: string | null): Promise<{ frames: Buffer[]; stop(): Promise<void> }>;
}

/** Metadata then payload, as a frame with META_FLAG carries them: a 2-byte length, the JSON, the message. */
export function withMeta(meta: string, payload: string, length = Buffer.byteLength(meta)): Buffer {
  const head = Buffer.alloc(2);
  head.writeUInt16BE(length);
  return Buffer.concat([head, Buffer.from(meta), Buffer.from(payload)]);
}

/** A well-formed text frame from another server (docs/protocol.md, "Bus frames"). */
export function frame(kind: number, payload: Buffer | string, origin = Buffer.alloc(8, 7), version = 1): Buffer {
  const body = typeof payload === 'string' ? Buffer.from(payload) : payload;
  return Buffer.concat([Buffer.from([0x54, version, kind]), origin, body]);
}

const FAST = { presenceInterval: 200, maxMessageSize: 65_536 };

export function busSuite(h: Harness): void {
  describe(`${h.name}: behaviour`, () => {
    let broker: Broker;
    let a: TachyonNode, b: TachyonNode, c: TachyonNode;
    before(async () => {
      broker = await h.startBroker();
      [a, b, c] = (await Promise.all([0, 1, 2].map(() => TachyonNode.start(h.config(broker, FAST))))) as [
        TachyonNode,
        TachyonNode,
        TachyonNode,
      ];
      await waitFor(async () => (await Promise.all([a, b, c].map((n) => n.stats()))).every((s) => s.connected), 'connected');
    });
    after(async () => {
      await Promise.all([a, b, c].map((n) => n?.close()));
      await broker?.dispose();
    });

    test('fan-out across three servers: every subscriber gets each publish exactly once, in order per publisher', async () => {
      const subs = await Promise.all([a, a, b, b, c, c].map((n) => n.subscriber(['fan'])));
      await sleep(150); // the broker subscriptions (batched on the next turn) are in place
      await Promise.all([a.publish('fan', 300, 'A'), b.publish('fan', 300, 'B'), c.publish('fan', 300, 'C')]);
      await waitFor(() => subs.every((s) => s.got.length >= 900), 'every delivery', 15_000);
      await sleep(200); // nothing more (no echo delivered twice)
      for (const s of subs) {
        assert.equal(s.got.length, 900);
        for (const from of ['A', 'B', 'C']) assert.deepEqual(s.seqs(from), range(300), `publisher ${from} in order, once`);
      }
      for (const s of subs) s.close();
    });

    test('any valid topic crosses servers (NATS wildcards, dots, the escape character), and only its own subscribers get it', async () => {
      const odd = ['x.*', 'rooms>', '>', 'a..b', '~tilde'];
      const sub = await b.subscriber(odd);
      const wild = await c.subscriber(['x.y']);
      await sleep(150);
      for (const t of odd) await a.publish(t, 2, t);
      await waitFor(() => sub.got.length === odd.length * 2, 'every odd topic');
      for (const t of odd) assert.deepEqual(sub.seqs(t, t), [0, 1], t);
      await sleep(100);
      assert.equal(wild.got.length, 0, '"x.*" is a topic, not a wildcard');
      sub.close();
      wild.close();
    });

    test('binary publishes cross servers as binary, byte for byte', async () => {
      const sub = await b.subscriber(['bin']);
      await sleep(150);
      const bytes = Buffer.from([0, 1, 2, 0xff, 0xfe, 0x80, 10, 13]);
      await a.publishRaw('bin', bytes);
      await waitFor(() => sub.binary.length === 1, 'the binary message');
      assert.deepEqual(sub.binary[0], bytes);
      sub.close();
    });

    test('dynamic interest: a server without subscribers of a topic receives nothing of it from the broker', async () => {
      const sub = await b.subscriber(['interest']);
      await sleep(150);
      const before = (await c.stats()).received;
      await a.publish('interest', 200, 'A');
      await waitFor(() => sub.got.length === 200, 'b receives');
      await sleep(100);
      assert.equal((await c.stats()).received, before, 'c has no subscriber: its channel is not subscribed');
      // The last subscriber leaves b: b unsubscribes, and hears no more of the topic.
      sub.close();
      await waitFor(async () => (await b.subscribers('interest')).local === 0, 'b has no subscriber');
      await sleep(150);
      const bBefore = (await b.stats()).received;
      await a.publish('interest', 100, 'A', 200);
      await sleep(200);
      assert.equal((await b.stats()).received, bBefore);
    });

    test('local subscribers get local publishes at once, even while the broker answers nothing', async () => {
      const local = await a.subscriber(['paused']);
      const remote = await b.subscriber(['paused']);
      await sleep(150);
      broker.pause();
      try {
        await a.publish('paused', 50, 'A');
        await waitFor(() => local.got.length === 50, 'local deliveries during the pause', 2000);
        assert.deepEqual(local.seqs('A'), range(50));
        assert.equal(remote.got.length, 0);
      } finally {
        broker.resume();
      }
      await waitFor(() => remote.got.length === 50, 'remote deliveries after the pause');
      assert.deepEqual(remote.seqs('A'), range(50));
      await sleep(100);
      assert.equal(local.got.length, 50, 'no echo');
      local.close();
      remote.close();
    });

    test('cluster-wide subscribers(topic): every server counts the others (presence, within an interval)', async () => {
      const subs = [
        ...(await Promise.all([a, a].map((n) => n.subscriber(['count'])))),
        ...(await Promise.all([b, b, b].map((n) => n.subscriber(['count'])))),
      ];
      await waitFor(async () => (await c.subscribers('count')).total === 5, 'c sees 5');
      assert.deepEqual(await a.subscribers('count'), { total: 5, local: 2 });
      assert.ok((await c.stats()).servers >= 2, 'c heard from a and b');
      for (const s of subs.slice(2)) s.close();
      await waitFor(async () => (await c.subscribers('count')).total === 2, 'c sees 2 after b’s left');
      subs[0]!.close();
      subs[1]!.close();
      await waitFor(async () => (await b.subscribers('count')).total === 0, 'nobody left');
    });

    test('a prefix isolates apps sharing one broker', async () => {
      const other = await TachyonNode.start(h.config(broker, { ...FAST, prefix: h.name.startsWith('nats') ? 'otherapp' : 'otherapp:' }));
      try {
        const mine = await b.subscriber(['shared']);
        const theirs = await other.subscriber(['shared']);
        await sleep(150);
        await a.publish('shared', 20, 'A');
        await waitFor(() => mine.got.length === 20, 'same-app delivery');
        await sleep(200);
        assert.equal(theirs.got.length, 0);
        assert.equal((await other.stats()).received, 0);
        assert.equal((await other.subscribers('shared')).total, 1, 'nor does it count the other app’s subscribers');
        mine.close();
        theirs.close();
      } finally {
        await other.close();
      }
    });

    test('bad messages from the broker are logged and dropped; the server goes on', async () => {
      const sub = await c.subscriber(['bad']);
      await sleep(150);
      const rejected = (await c.stats()).rejected;
      const bad = [
        Buffer.from('hello'), // not a frame
        Buffer.alloc(3, 0x54), // shorter than the header
        frame(0, '{}', undefined, 9), // unknown version
        frame(7, '{}'), // unknown kind
        frame(0, Buffer.from([0xc3, 0x28])), // text that is not UTF-8
        frame(0, Buffer.alloc(70_000, 0x61)), // over maxMessageSize (64 KiB on c's side too)
        frame(2, '{"ttl":1,"counts":[]}'), // a presence frame on a topic channel
        frame(0x80, Buffer.from([0])), // metadata flag, no room for its length
        frame(0x80, withMeta('{}', '', 10)), // shorter than its metadata
        frame(0x80, withMeta('nope', '{}')), // metadata that is not JSON
        frame(0x80, withMeta('{"a":1}', '{}')), // metadata values must be strings
        frame(0x80, withMeta('x'.repeat(5000), '{}')), // metadata over 4 KiB
        frame(0x82, withMeta('{}', '{"ttl":1,"counts":[]}')), // a presence frame with metadata
      ];
      for (const bytes of bad) await h.inject(broker, 'bad', bytes);
      await h.inject(broker, null, frame(2, 'not json'));
      await h.inject(broker, null, frame(2, '{"ttl":100,"counts":[["x",-1]]}'));
      await h.inject(broker, 'bad', frame(0, '{"topic":"bad","event":"ok","data":{"from":"X","seq":1}}'));
      // Metadata (a traceparent from a traced server) is for the server: browsers get the message alone.
      await h.inject(
        broker,
        'bad',
        frame(0x80, withMeta('{"traceparent":"x"}', '{"topic":"bad","event":"ok","data":{"from":"X","seq":2}}')),
      );
      await waitFor(() => sub.got.length === 2, 'the good messages after the bad ones');
      assert.deepEqual(sub.got[0], { topic: 'bad', event: 'ok', data: { from: 'X', seq: 1 } });
      assert.deepEqual(sub.got[1], { topic: 'bad', event: 'ok', data: { from: 'X', seq: 2 } });
      assert.equal((await c.stats()).rejected - rejected, bad.length + 2);
      assert.ok(c.logged(/dropped a bad message/), 'logged');
      assert.ok(c.alive);
      sub.close();
    });

    test('ready() is true while connected (health /readyz answers 200)', async () => {
      const res = await fetch(`http://127.0.0.1:${a.port}/readyz`);
      assert.equal(res.status, 200);
    });
  });

  describe(`${h.name}: faults`, () => {
    test('broker down at start: the app serves local traffic, retries with backoff, logs, then joins', async () => {
      const broker = await h.unstartedBroker();
      const a = await TachyonNode.start(h.config(broker, FAST));
      try {
        const local = await a.subscriber(['early']);
        await a.publish('early', 10, 'A');
        await waitFor(() => local.got.length === 10, 'local deliveries without a broker');
        assert.equal((await fetch(`http://127.0.0.1:${a.port}/readyz`)).status, 503, '/readyz says not ready');
        await sleep(400);
        assert.ok(a.logged(/connection error|cannot connect/), 'the failed attempts are logged');
        assert.equal((await a.stats()).connected, false);
        await broker.start();
        await waitFor(async () => (await a.stats()).connected, 'a connects once the broker is up', 15_000);
        assert.ok(a.logged(/bus connected/));
        assert.equal((await fetch(`http://127.0.0.1:${a.port}/readyz`)).status, 200);
        // The queued publishes went out (nobody elsewhere listened); cross-server works now.
        const b = await TachyonNode.start(h.config(broker, FAST));
        try {
          const remote = await b.subscriber(['early']);
          await sleep(150);
          await a.publish('early', 10, 'A', 10);
          await waitFor(() => remote.got.length === 10, 'cross-server after a late broker');
          assert.deepEqual(remote.seqs('A'), range(10, 10));
        } finally {
          await b.close();
        }
      } finally {
        await a.close();
        await broker.dispose();
      }
    });

    test('broker restart under traffic: both servers reconnect and resubscribe every topic by themselves', async () => {
      const broker = await h.startBroker();
      const [a, b] = await Promise.all([TachyonNode.start(h.config(broker, FAST)), TachyonNode.start(h.config(broker, FAST))]);
      try {
        const topics = ['r1', 'r2', 'r3'];
        const sub = await b.subscriber(topics);
        await sleep(150);
        let seq = 0;
        let stop = false;
        const traffic = (async () => {
          while (!stop) {
            for (const t of topics) await a.publish(t, 5, 'A', seq);
            seq += 5;
            await sleep(10);
          }
        })();
        await waitFor(() => sub.got.length > 30, 'traffic flows');
        await broker.restart(300);
        const mark = seq;
        await waitFor(async () => (await a.stats()).connected && (await b.stats()).connected, 'both reconnect', 15_000);
        await waitFor(() => topics.every((t) => sub.seqs('A', t).some((s) => s > mark + 20)), 'every topic flows again', 15_000);
        stop = true;
        await traffic;
        for (const t of topics) {
          const got = sub.seqs('A', t);
          assert.equal(new Set(got).size, got.length, `${t}: no duplicates`);
          assert.deepEqual(
            got,
            [...got].sort((x, y) => x - y),
            `${t}: in order (gaps allowed: the outage)`,
          );
        }
        assert.ok(b.logged(/disconnected/) || a.logged(/disconnected|connection error/), 'the outage is logged');
      } finally {
        await Promise.all([a.close(), b.close()]);
        await broker.dispose();
      }
    });

    test('slow broker: publishes queue up to the bound, then new ones are dropped (counted, logged); the rest arrives in order', async () => {
      const broker = await h.startBroker();
      const limits = { ...FAST, maxInFlight: 20, maxQueue: 100 };
      const [a, b] = await Promise.all([TachyonNode.start(h.config(broker, limits)), TachyonNode.start(h.config(broker, FAST))]);
      try {
        const local = await a.subscriber(['slow']);
        const remote = await b.subscriber(['slow']);
        await sleep(150);
        broker.pause();
        try {
          await a.publish('slow', 2000, 'A');
          await waitFor(() => local.got.length === 2000, 'local deliveries', 5000);
          const s = await a.stats();
          assert.ok(s.queued <= 100 && s.inFlight <= 20, `bounded: ${JSON.stringify(s)}`);
          assert.ok(s.dropped >= 2000 - 120 - 50, `dropped past the bound: ${s.dropped}`);
          assert.ok(a.logged(/publish queue full/));
        } finally {
          broker.resume();
        }
        await waitFor(async () => (await a.stats()).queued === 0, 'queue drains');
        await sleep(300);
        const got = remote.seqs('A');
        assert.ok(got.length >= 100 && got.length <= 120, `what fit in the window and queue arrives: ${got.length}`);
        assert.deepEqual(got, range(got.length), 'the oldest ones, in order');
        await a.publish('slow', 10, 'A', 5000);
        await waitFor(() => remote.seqs('A').includes(5009), 'later publishes flow');
      } finally {
        await Promise.all([a.close(), b.close()]);
        await broker.dispose();
      }
    });
  });
}
