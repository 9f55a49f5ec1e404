// Bad input on the fallback transport, with a raw HTTP client (fetch): unknown and forged
// sessions, oversized POSTs, floods, refused upgrades, streams dropped by the client, and
// sessions that never POST (collected); nothing crashes, nothing lingers.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { App } from '../../../src/index.ts';
import { eventually, start, type Running } from '../../helpers.ts';

interface RawSession {
  id: string;
  /** Every event's text so far (`event:` and `data:` lines). */
  events: string[];
  ended: boolean;
  abort(): void;
  post(body: string): Promise<Response>;
}

async function openSession(base: string, path = '/live'): Promise<RawSession> {
  const abort = new AbortController();
  const res = await fetch(base + path, { headers: { accept: 'text/event-stream' }, signal: abort.signal });
  assert.equal(res.status, 200);
  assert.equal(res.headers.get('x-accel-buffering'), 'no');
  assert.match(res.headers.get('cache-control') ?? '', /no-cache/);
  assert.match(res.headers.get('content-type') ?? '', /^text\/event-stream/);
  const s: RawSession = {
    id: '',
    events: [],
    ended: false,
    abort: () => abort.abort(),
    post: (body) => fetch(`${base}${path}?session=${s.id}`, { method: 'POST', body }),
  };
  const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
  let buf = '';
  void (async () => {
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buf += value;
        for (let i = buf.indexOf('\n\n'); i !== -1; i = buf.indexOf('\n\n')) {
          s.events.push(buf.slice(0, i));
          buf = buf.slice(i + 2);
        }
      }
    } catch {}
    s.ended = true;
  })();
  await eventually(() => s.events.length > 0);
  s.id = (JSON.parse(s.events[0]!.replace(/^event: session\ndata: /, '')) as { session: string }).session;
  return s;
}

const closeOf = (s: RawSession) => {
  const e = s.events.find((x) => x.startsWith('event: close'));
  return e === undefined ? undefined : (JSON.parse(e.slice(e.indexOf('data: ') + 6)) as { code: number; reason: string });
};

describe('fallback transport: bad input', () => {
  let running: Running;
  let app: App;
  before(async () => {
    app = new App();
    app.ws('/live', {
      fallback: { heartbeat: 1 },
      maxPayloadLength: 1024,
      idleTimeout: 8,
      rateLimit: { messagesPerSecond: 20, closeAfter: 10 },
      upgrade: (req) => (req.query.deny === '1' ? false : { user: 'u' }),
      events: { echo: { handler: (_ws, d) => d } },
    });
    app.ws('/plain', {});
    running = await start(app);
  });
  after(() => running.close());

  test('unknown, forged and finished sessions: 404 with a protocol error, nothing else happens', async () => {
    for (const q of ['', '?session=', '?session=../../etc']) {
      const res = await fetch(`${running.url}/live${q}`, { method: 'POST', body: '{"type":"ping","ref":1}' });
      assert.equal(res.status, 404, `${q}: no session named: the app's own 404`);
      await res.body?.cancel();
    }
    for (const q of [`?session=${randomBytes(18).toString('base64url')}`, '?session=a&session=b', '?x=1&session=forged']) {
      const res = await fetch(`${running.url}/live${q}`, { method: 'POST', body: '{"type":"ping","ref":1}' });
      assert.equal(res.status, 404, q);
      assert.equal(((await res.json()) as { code: string }).code, 'UNKNOWN_SESSION');
    }
    const s = await openSession(running.url);
    assert.equal(s.id.length, 24, '144 random bits');
    const other = await openSession(running.url);
    assert.notEqual(s.id, other.id);
    assert.equal((await s.post('{"type":"ping","ref":7}')).status, 204);
    await eventually(() => s.events.some((e) => e.includes('"pong"') && e.includes('"ref":7')));
    assert.ok(!other.events.some((e) => e.includes('"pong"')), 'a frame reaches its own session only');
    s.abort();
    await eventually(() => app.connections === 1);
    assert.equal((await s.post('{"type":"ping"}')).status, 404, 'a session whose stream is gone is unknown');
    other.abort();
    await eventually(() => app.connections === 0);
  });

  test('a POST over maxPost: 413, and the session closes with 1009', async () => {
    const s = await openSession(running.url);
    const res = await s.post(`{"type":"event","event":"echo","data":"${'x'.repeat(2000)}"}`);
    assert.equal(res.status, 413);
    assert.equal(((await res.json()) as { code: string }).code, 'TOO_LARGE');
    await eventually(() => s.ended);
    assert.equal(closeOf(s)?.code, 1009);
    await eventually(() => app.connections === 0);
  });

  test('a POST flood hits the route rate limit: RATE_LIMITED replies, then close 4430', async () => {
    const s = await openSession(running.url);
    const frames = Array.from({ length: 40 }, (_, i) => `{"type":"ping","ref":${i + 1}}`).join('\n');
    const res = await s.post(frames);
    assert.equal(res.status, 204);
    await eventually(() => s.ended);
    assert.ok(s.events.some((e) => e.includes('RATE_LIMITED')));
    assert.equal(closeOf(s)?.code, 4430);
    await eventually(() => app.connections === 0);
  });

  test('an HTTP GET or POST route on the path of a fallback route is refused at start', async () => {
    const declare: ((app: App) => void)[] = [
      (a) => a.get('/live', () => 'mine'),
      (a) => a.post('/live', () => 'mine'),
      (a) => a.any('/live', () => 'mine'),
    ];
    for (const add of declare) {
      const other = new App();
      other.ws('/live', { fallback: true });
      add(other);
      await assert.rejects(other.listen({ port: 0, host: '127.0.0.1' }), /ws \/live: the fallback transport needs GET and POST \/live/);
    }
  });

  test('the upgrade hook decides: false → 401, no session', async () => {
    const res = await fetch(`${running.url}/live?deny=1`, { headers: { accept: 'text/event-stream' } });
    assert.equal(res.status, 401);
    await res.body?.cancel();
    assert.equal(app.connections, 0);
  });

  test('plain GETs and POSTs without a session fall through to the app; routes without fallback have no SSE', async () => {
    assert.equal((await fetch(`${running.url}/live`)).status, 404);
    assert.equal((await fetch(`${running.url}/live`, { method: 'POST', body: '{}' })).status, 404);
    const res = await fetch(`${running.url}/plain`, { headers: { accept: 'text/event-stream' } });
    assert.equal(res.status, 404);
    assert.equal((await fetch(`${running.url}/plain?session=x`, { method: 'POST', body: 'x' })).status, 404);
  });

  test('streams the client drops and sessions that never POST are collected; timers and handles come back', async () => {
    const baseline = process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
    const dropped = await Promise.all(Array.from({ length: 20 }, () => openSession(running.url)));
    assert.equal(app.connections, 20);
    for (const s of dropped) s.abort();
    await eventually(() => app.connections === 0);
    // Never POSTs: heartbeats flow (idle proxies keep the stream), then idleTimeout (8 s) closes it.
    const silent = await openSession(running.url);
    await eventually(() => silent.events.length > 1, 3000);
    assert.equal(silent.events[1], ':', 'a heartbeat comment');
    await eventually(() => silent.ended, 12_000);
    assert.deepEqual(closeOf(silent), { code: 1001, reason: 'Idle timeout' });
    assert.equal(app.connections, 0);
    await eventually(() => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length <= baseline, 3000);
  });
});
