// The fixture app built with one Kit version, served by `node build`, tested over real
// sockets. kit3.test.ts and kit2.test.ts run this same suite on their own build.
import assert from 'node:assert/strict';
import { cpSync, existsSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { connect as tcpConnect } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { connect } from '@tachyon/client';
import { buildFixture, startServer, type KitVersion, type Running } from './fixture.ts';

/** A raw HTTP request (fetch cannot set Host or read every framing detail). */
export function raw(
  url: string,
  options: { method?: string; path: string; headers?: Record<string, string>; body?: string | Buffer },
): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: Buffer }> {
  const u = new URL(url);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      { host: u.hostname, port: u.port, method: options.method ?? 'GET', path: options.path, headers: options.headers, agent: false },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks) }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(options.body);
  });
}

/**
 * Sends `head` on a raw socket and resolves with what comes back (latin1) once a response head
 * has arrived or the server closed. For a request whose body the server refuses before reading
 * it: a client that went on writing that body would race the server's close (EPIPE on the
 * write, and with it the response lost), so the test writes only the start of one.
 */
function rawHead(url: string, head: string): Promise<string> {
  const u = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = tcpConnect(Number(u.port), u.hostname);
    let data = '';
    // A server that waits for the rest of the body answers nothing: what came back by then.
    const timer = setTimeout(() => done(), 5000);
    const done = () => {
      clearTimeout(timer);
      socket.destroy();
      resolve(data);
    };
    socket.on('data', (chunk) => {
      data += chunk.toString('latin1');
      if (data.includes('\r\n\r\n')) done();
    });
    socket.on('end', done);
    socket.on('error', (err) => (data === '' ? reject(err) : done()));
    socket.write(head);
  });
}

export function fixtureSuite(kit: KitVersion): void {
  describe(`@tachyon/sveltekit on ${kit === 'kit3' ? 'SvelteKit 3' : 'SvelteKit 2'}`, { timeout: 300_000 }, () => {
    let dir: string;
    let server: Running;

    before(async () => {
      dir = buildFixture(kit);
      server = await startServer(dir);
    });
    after(async () => {
      await server?.stop();
    });

    it('renders an SSR page with platform and the client address', async () => {
      const res = await fetch(server.url + '/');
      assert.equal(res.status, 200);
      assert.match(res.headers.get('content-type') ?? '', /^text\/html/);
      const html = await res.text();
      assert.match(html, /<h1>hello from ssr<\/h1>/);
      assert.match(html, /platform: true/);
      assert.match(html, /ip: 127\.0\.0\.1/);
    });

    it('streams a load promise: the page arrives before the promise resolves', async () => {
      const started = Date.now();
      const res = await fetch(server.url + '/stream');
      assert.equal(res.status, 200);
      const reader = res.body!.getReader();
      const first = new TextDecoder().decode((await reader.read()).value);
      const firstAt = Date.now() - started;
      let rest = '';
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        rest += new TextDecoder().decode(value);
      }
      assert.match(first, /fast value/);
      assert.doesNotMatch(first, /slow value/);
      assert.ok(firstAt < 250, `first chunk after ${firstAt} ms`);
      assert.match(rest, /slow value/);
    });

    it('runs a form action: cookie set, 303 redirect, the next page reads the cookie', async () => {
      const res = await fetch(server.url + '/form', {
        method: 'POST',
        body: new URLSearchParams({ name: 'ada' }),
        headers: { origin: server.url, accept: 'text/html' },
        redirect: 'manual',
      });
      assert.equal(res.status, 303);
      assert.equal(res.headers.get('location'), '/form/done');
      const cookie = res.headers.getSetCookie().find((c) => c.startsWith('name='));
      assert.ok(cookie, 'Set-Cookie name');
      assert.match(cookie!, /HttpOnly/i);
      const done = await fetch(server.url + '/form/done', { headers: { cookie: cookie!.split(';')[0]! } });
      assert.match(await done.text(), /name: ada/);
    });

    it('answers a failed action with 400 and the form data', async () => {
      const res = await fetch(server.url + '/form', {
        method: 'POST',
        body: new URLSearchParams({ name: '' }),
        headers: { origin: server.url, accept: 'text/html' },
      });
      assert.equal(res.status, 400);
      assert.match(await res.text(), /name is required/);
    });

    it('refuses a cross-site form POST (SvelteKit CSRF check sees the real origin)', async () => {
      const res = await fetch(server.url + '/form', {
        method: 'POST',
        body: new URLSearchParams({ name: 'x' }),
        headers: { origin: 'https://evil.example' },
      });
      assert.equal(res.status, 403);
    });

    it('POSTs JSON to a +server.ts endpoint', async () => {
      const res = await fetch(server.url + '/api/echo', {
        method: 'POST',
        body: JSON.stringify({ a: [1, 2, 3] }),
        headers: { 'content-type': 'application/json' },
      });
      assert.equal(res.status, 201);
      const body = await res.json();
      assert.deepEqual(body.received, { a: [1, 2, 3] });
      assert.equal(body.ip, '127.0.0.1');
      assert.equal(body.url, `${server.url}/api/echo`);
    });

    it("runs src/instrumentation.server.ts before any of the app's code", async () => {
      const recorded = (await (await fetch(server.url + '/api/instrumented')).json()) as { ran: boolean; beforeApp: boolean } | null;
      assert.ok(recorded !== null, 'the instrumentation file ran');
      assert.equal(recorded.ran, true);
      assert.equal(recorded.beforeApp, true, 'before hooks.server.ts was loaded');
      assert.ok(existsSync(join(dir, 'build', 'start.js')), 'build/index.js is the facade, the server moved to start.js');
    });

    it('new Request(event.request) and fetch(event.request) work in an endpoint (the light Request handed to undici)', async () => {
      const post = (via: string) =>
        fetch(`${server.url}/api/relay?via=${via}`, { method: 'POST', body: '{"n":1}', headers: { 'content-type': 'application/json' } });
      const copy = await post('copy');
      assert.equal(copy.status, 200);
      assert.deepEqual(await copy.json(), {
        response: 'LightResponse',
        method: 'POST',
        url: `${server.url}/api/relay?via=copy`,
        body: '{"n":1}',
        used: true,
      });
      const relayed = await post('fetch');
      assert.equal(relayed.status, 200);
      assert.deepEqual(await relayed.json(), { response: 'LightResponse', relayed: { hop: true, method: 'POST', body: '{"n":1}' } });
    });

    it('refuses a body over BODY_SIZE_LIMIT (default 512K) with 413, from its Content-Length, before reading it', async () => {
      // Only the body's first bytes are sent: the 413 must come from the declared length.
      const head = await rawHead(
        server.url,
        `POST /api/echo HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: ${600 * 1024}\r\n\r\n{"big":"xxxx`,
      );
      assert.match(head, /^HTTP\/1\.1 413 /);
    });

    it('refuses a chunked body that grows past BODY_SIZE_LIMIT with 413, as adapter-node does (not 500)', async () => {
      const headers = { 'content-type': 'application/json', 'transfer-encoding': 'chunked' };
      const res = await raw(server.url, {
        method: 'POST',
        path: '/api/echo',
        headers,
        body: JSON.stringify({ big: 'x'.repeat(600 * 1024) }),
      });
      assert.equal(res.status, 413);
      const small = await raw(server.url, { method: 'POST', path: '/api/echo', headers, body: JSON.stringify({ small: true }) });
      assert.equal(small.status, 201, 'a chunked body under the limit is read');
      assert.deepEqual(JSON.parse(small.body.toString()).received, { small: true });
    });

    it('serves the prerendered page from memory, precompressed', async () => {
      const res = await raw(server.url, { path: '/about', headers: { 'accept-encoding': 'br' } });
      assert.equal(res.status, 200);
      assert.equal(res.headers['content-encoding'], 'br');
      assert.match(String(res.headers['content-type']), /^text\/html/);
      assert.ok(res.headers.etag);
      const plain = await fetch(server.url + '/about');
      assert.match(await plain.text(), /about \(prerendered\)/);
      const again = await raw(server.url, {
        path: '/about',
        headers: { 'accept-encoding': 'br', 'if-none-match': String(res.headers.etag) },
      });
      assert.equal(again.status, 304);
    });

    it('serves immutable assets with a year of caching, ranges and 304s', async () => {
      const html = await (await fetch(server.url + '/')).text();
      const asset = /\/_app\/immutable\/[^"']+\.js/.exec(html)?.[0];
      assert.ok(asset, 'an immutable script in the page');
      const res = await raw(server.url, { path: asset!, headers: { 'accept-encoding': 'gzip' } });
      assert.equal(res.status, 200);
      assert.equal(res.headers['cache-control'], 'public, max-age=31536000, immutable');
      assert.match(String(res.headers['content-type']), /javascript/);
      const etag = String(res.headers.etag);
      assert.equal((await raw(server.url, { path: asset!, headers: { 'accept-encoding': 'gzip', 'if-none-match': etag } })).status, 304);
      const range = await raw(server.url, { path: asset!, headers: { range: 'bytes=0-9' } });
      assert.equal(range.status, 206);
      assert.equal(range.body.length, 10);
      // The build's .br/.gz files are variants, not URLs.
      assert.equal((await raw(server.url, { path: asset! + '.br' })).status, 404);
      // Files from static/ are served too, without the immutable header.
      const robots = await raw(server.url, { path: '/robots.txt' });
      assert.equal(robots.status, 200);
      assert.match(robots.body.toString(), /User-agent/);
      assert.notEqual(robots.headers['cache-control'], 'public, max-age=31536000, immutable');
      // The content type SvelteKit's manifest recorded (mrmime's), not Tachyon's own table,
      // which has no entry for .geojson (it would say application/octet-stream).
      const places = await raw(server.url, { path: '/places.geojson' });
      assert.equal(places.status, 200);
      assert.equal(places.headers['content-type'], 'application/geo+json');
      // static/form/guide.txt shares its directory with the /form pages: both are served, and
      // the pages keep SSR's compression (an exact route per file, not a /form/* wildcard).
      assert.match((await raw(server.url, { path: '/form/guide.txt' })).body.toString(), /guide/);
      const page = await raw(server.url, { path: '/form/done', headers: { 'accept-encoding': 'gzip' } });
      assert.equal(page.status, 200);
      assert.equal(page.headers['content-encoding'], 'gzip');
    });

    it('renders 404 and error pages with the right status, hiding internal messages', async () => {
      const missing = await fetch(server.url + '/no/such/page');
      assert.equal(missing.status, 404);
      assert.match(await missing.text(), /<h1 id="status">404<\/h1>/);
      const missingAsset = await fetch(server.url + '/_app/immutable/nope.js');
      assert.equal(missingAsset.status, 404);
      const teapot = await fetch(server.url + '/teapot');
      assert.equal(teapot.status, 418);
      assert.match(await teapot.text(), /short and stout/);
      const crash = await fetch(server.url + '/crash');
      assert.equal(crash.status, 500);
      const text = await crash.text();
      assert.match(text, /Internal Error/);
      assert.doesNotMatch(text, /secret internal detail/);
    });

    it('dedups concurrent anonymous GETs, and refuses to share credentialed, Set-Cookie and Vary responses', async () => {
      const burst = async (query: string, headers: Record<string, string> = {}) => {
        const answers = await Promise.all(Array.from({ length: 8 }, () => raw(server.url, { path: `/dedup?${query}`, headers })));
        for (const a of answers) assert.equal(a.status, 200);
        return new Set(answers.map((a) => JSON.parse(a.body.toString()).calls as number));
      };
      // One render for eight requests: every answer carries the same call count.
      assert.equal((await burst('shared=1')).size, 1);
      // Refusals: each request renders on its own.
      assert.equal((await burst('cookie-req=1', { cookie: 'sid=1' })).size, 8);
      assert.equal((await burst('auth=1', { authorization: 'Bearer x' })).size, 8);
      assert.equal((await burst('cookie=1')).size, 8, 'responses with Set-Cookie are not shared');
      assert.equal((await burst('vary=1')).size, 8, 'responses with Vary are not shared');
      assert.equal((await burst('opt-out=1', { 'x-no-dedup': '1' })).size, 8);
    });

    it('runs a hooks.ws event and replies; upgrade can refuse', async () => {
      const live = connect(server.url.replace('http', 'ws') + '/ws', { maxRetries: 0 });
      try {
        const hello = new Promise((resolve) => live.onEvent('hello', resolve));
        await live.ready;
        assert.deepEqual(await hello, { user: 'anonymous' });
        assert.deepEqual(await live.request('echo', { n: 1 }), { echoed: { n: 1 }, user: 'anonymous' });
        // A module hooks.ws imports (Kit 2's fixture: compiled by the adapter, no Vite plugin; $lib and $env: compile-hooks.test.ts).
        assert.deepEqual(await live.request('where'), { lib: 'fixture lib' });
      } finally {
        live.close();
      }
      const refused = await raw(server.url, {
        path: '/ws?deny=1',
        headers: {
          connection: 'upgrade',
          upgrade: 'websocket',
          'sec-websocket-version': '13',
          'sec-websocket-key': 'dGhlIHNhbXBsZSBub25jZQ==',
        },
      });
      assert.equal(refused.status, 401);
    });

    it('event.platform: send to a user, sendTo a filter, request a client, pressure, presence', async () => {
      const ws = server.url.replace('http', 'ws') + '/ws';
      const a1 = connect(ws + '?id=u1', { maxRetries: 0 });
      const a2 = connect(ws + '?id=u1', { maxRetries: 0 }); // the same user in a second tab
      const b = connect(ws + '?id=v2', { maxRetries: 0 });
      const api = async (query: string) => (await fetch(`${server.url}/api/platform?${query}`)).json();
      try {
        const dms: unknown[] = [];
        const notes: unknown[] = [];
        for (const c of [a1, a2, b]) {
          c.onEvent('dm', (data) => dms.push(data));
          c.onEvent('note', (data) => notes.push(data));
        }
        for (const c of [a1, a2]) c.handle('ask', (data) => ({ answer: 'yes', got: data }));
        a1.subscribe('room:lobby', () => {});
        await Promise.all([a1.ready, a2.ready, b.ready]);
        await a1.ping(); // subscribed

        assert.deepEqual(await api('op=send&id=u1'), { n: 2, connections: 3 });
        assert.deepEqual(await api('op=send&id=nobody'), { n: 0, connections: 3 });
        assert.deepEqual(await api('op=sendTo&id=v'), { n: 1 });
        for (let i = 0; i < 50 && (dms.length < 2 || notes.length < 1); i++) await new Promise((r) => setTimeout(r, 20));
        assert.deepEqual(dms, [{ to: 'u1' }, { to: 'u1' }]);
        assert.deepEqual(notes, [{ prefix: 'v' }]);

        assert.deepEqual(await api('op=request&id=u1'), { reply: { answer: 'yes', got: { q: 'ready?' } } });
        const pressure = await api('op=pressure');
        assert.equal(pressure.connections, 3);
        assert.equal(pressure.backpressured, 0);
        assert.equal(pressure.draining, false);
        assert.ok(pressure.inflight >= 1, 'this request is in flight');
        assert.deepEqual(await api('op=presence'), [{ id: 'u1' }]);
        assert.match((await api('op=bad&id=u1')).error, /TypeError: Invalid event name/);
      } finally {
        for (const c of [a1, a2, b]) c.close();
      }
    });

    it('delivers platform.publish from a form action and an endpoint to WebSocket subscribers', async () => {
      const live = connect(server.url.replace('http', 'ws') + '/ws', { maxRetries: 0 });
      try {
        const got: [string, unknown][] = [];
        live.subscribe('news', (event, data) => got.push([event, data]));
        await live.ready;
        await live.ping(); // the subscription is in place
        const res = await fetch(server.url + '/live?/publish', {
          method: 'POST',
          body: new URLSearchParams({ text: 'hi' }),
          headers: { origin: server.url, accept: 'application/json', 'x-sveltekit-action': 'true' },
        });
        assert.equal(res.status, 200);
        const result = await res.json();
        assert.equal(result.type, 'success');
        assert.match(result.data, /"subscribers"|1/);
        await fetch(server.url + '/api/echo', { method: 'POST', body: '"x"', headers: { 'content-type': 'application/json' } });
        for (let i = 0; i < 50 && got.length < 2; i++) await new Promise((r) => setTimeout(r, 20));
        assert.deepEqual(got, [
          ['note', { text: 'hi' }],
          ['echo', 'x'],
        ]);
      } finally {
        live.close();
      }
    });
  });
}

export function handlerSuite(kit: KitVersion): void {
  describe(`build/handler.js inside a user's own Tachyon app (${kit})`, { timeout: 300_000 }, () => {
    it("install(app): SvelteKit pages, files and hooks.ws beside the app's own routes", async () => {
      const dir = buildFixture(kit);
      cpSync(fileURLToPath(new URL('../fixture/custom-server.mjs', import.meta.url)), join(dir, 'custom-server.mjs'));
      const server = await startServer(dir, {}, 'custom-server.mjs');
      try {
        assert.deepEqual(await (await fetch(server.url + '/own/health')).json(), { ok: true, subscribers: 0 });
        assert.match(await (await fetch(server.url + '/')).text(), /hello from ssr/);
        assert.match(await (await fetch(server.url + '/about')).text(), /about \(prerendered\)/);
        assert.equal((await fetch(server.url + '/robots.txt')).status, 200);
        const instrumented = (await (await fetch(server.url + '/api/instrumented')).json()) as {
          ran?: boolean;
          beforeApp?: boolean;
        } | null;
        assert.deepEqual(
          [instrumented?.ran, instrumented?.beforeApp],
          [true, true],
          'build/handler.js runs instrumentation.server.ts first too',
        );
        const live = connect(server.url.replace('http', 'ws') + '/ws', { maxRetries: 0 });
        const own = connect(server.url.replace('http', 'ws') + '/own/ws', { maxRetries: 0 });
        try {
          const got: unknown[] = [];
          live.subscribe('news', (_event, data) => got.push(data));
          await live.ping();
          assert.equal(await own.request('ping'), 'pong');
          await fetch(server.url + '/api/echo', {
            method: 'POST',
            body: '{"from":"endpoint"}',
            headers: { 'content-type': 'application/json' },
          });
          for (let i = 0; i < 50 && got.length === 0; i++) await new Promise((r) => setTimeout(r, 20));
          assert.deepEqual(got, [{ from: 'endpoint' }], "platform.publish goes through the user's app");
        } finally {
          live.close();
          own.close();
        }
      } finally {
        await server.stop();
      }
    });
  });
}

export function environmentSuite(kit: KitVersion): void {
  describe(`adapter-node's environment variables (${kit})`, { timeout: 300_000 }, () => {
    let dir: string;
    before(() => {
      dir = buildFixture(kit);
    });

    it('ADDRESS_HEADER + XFF_DEPTH, BODY_SIZE_LIMIT, PROTOCOL_HEADER and HOST_HEADER', async () => {
      const server = await startServer(dir, {
        ADDRESS_HEADER: 'X-Forwarded-For',
        XFF_DEPTH: '2',
        BODY_SIZE_LIMIT: '1K',
        PROTOCOL_HEADER: 'x-forwarded-proto',
        HOST_HEADER: 'x-forwarded-host',
      });
      try {
        const ip = await raw(server.url, { path: '/api/echo', headers: { 'x-forwarded-for': '9.9.9.9, 1.1.1.1, 2.2.2.2' } });
        assert.equal(JSON.parse(ip.body.toString()).ip, '1.1.1.1');
        const shallow = await raw(server.url, { path: '/api/echo', headers: { 'x-forwarded-for': '2.2.2.2' } });
        assert.equal(shallow.status, 500, 'fewer addresses than XFF_DEPTH');
        const none = await raw(server.url, { path: '/api/echo' });
        assert.equal(none.status, 500, 'ADDRESS_HEADER missing from the request');
        const xff = { 'x-forwarded-for': '1.1.1.1, 2.2.2.2', 'content-type': 'application/json' };
        assert.equal(
          (await raw(server.url, { method: 'POST', path: '/api/echo', headers: xff, body: JSON.stringify('x'.repeat(2000)) })).status,
          413,
        );
        const small = await raw(server.url, {
          method: 'POST',
          path: '/api/echo',
          headers: { ...xff, 'x-forwarded-proto': 'https', 'x-forwarded-host': 'shop.example' },
          body: '"ok"',
        });
        assert.equal(small.status, 201);
        assert.equal(JSON.parse(small.body.toString()).url, 'https://shop.example/api/echo');
        const bad = await raw(server.url, { path: '/api/echo', headers: { ...xff, 'x-forwarded-proto': 'https://evil' } });
        assert.equal(bad.status, 400, 'a protocol header that is not a scheme');
      } finally {
        await server.stop();
      }
    });

    it('ORIGIN fixes the URL SvelteKit sees', async () => {
      const server = await startServer(dir, { ORIGIN: 'https://app.example' });
      try {
        const res = await raw(server.url, {
          method: 'POST',
          path: '/api/echo',
          headers: { 'content-type': 'application/json', host: 'other.example' },
          body: '1',
        });
        assert.equal(JSON.parse(res.body.toString()).url, 'https://app.example/api/echo');
      } finally {
        await server.stop();
      }
    });

    it('refuses bad values at startup, naming the variable', async () => {
      for (const [name, value] of [
        ['BODY_SIZE_LIMIT', 'lots'],
        ['XFF_DEPTH', '0'],
        ['PORT', 'http'],
        ['SHUTDOWN_TIMEOUT', '-1'],
        ['ORIGIN', 'app.example'],
      ] as const) {
        await assert.rejects(
          startServer(dir, { [name]: value }),
          new RegExp(`${name}.*${value.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}|exited \\(1\\)[\\s\\S]*${name}`),
          name,
        );
      }
    });

    it('SIGTERM: in-flight requests finish, sveltekit:shutdown fires, the process exits', async () => {
      const server = await startServer(dir, { SHUTDOWN_TIMEOUT: '5' });
      const slow = raw(server.url, { path: '/slow?ms=700' });
      await new Promise((r) => setTimeout(r, 200));
      server.child.kill('SIGTERM');
      const res = await slow;
      assert.equal(res.status, 200);
      assert.equal(res.body.toString(), 'slept 700');
      assert.equal(await server.exited, 0);
      assert.match(server.output(), /sveltekit:shutdown SIGTERM/);
    });

    it('SIGTERM during a streamed page, a form upload and with an open WebSocket: all finish, the socket gets 1001, exit 0', async () => {
      const server = await startServer(dir, { SHUTDOWN_TIMEOUT: '5' });
      const ws = new WebSocket(server.url.replace('http', 'ws') + '/ws');
      await new Promise((resolve, reject) => {
        ws.onopen = resolve;
        ws.onerror = reject;
      });
      const closed = new Promise<number>((resolve) => (ws.onclose = (e) => resolve(e.code)));
      // The upload: the head and half the file now, the rest after SIGTERM.
      const boundary = 'tachyonboundary';
      const file = 'x'.repeat(64 * 1024);
      const head = `--${boundary}\r\ncontent-disposition: form-data; name="file"; filename="a.txt"\r\ncontent-type: text/plain\r\n\r\n`;
      const tail = `\r\n--${boundary}--\r\n`;
      const body = Buffer.from(head + file + tail);
      const u = new URL(server.url);
      let sendRest!: () => void;
      const upload = new Promise<{ status: number; text: string }>((resolve, reject) => {
        const req = httpRequest(
          {
            host: u.hostname,
            port: u.port,
            method: 'POST',
            path: '/upload',
            agent: false,
            headers: {
              'content-type': `multipart/form-data; boundary=${boundary}`,
              'content-length': String(body.length),
              origin: server.url,
              accept: 'application/json',
              'x-sveltekit-action': 'true',
            },
          },
          (res) => {
            let text = '';
            res.on('data', (c: Buffer) => (text += c));
            res.on('end', () => resolve({ status: res.statusCode!, text }));
            res.on('error', reject);
          },
        );
        req.on('error', reject);
        req.write(body.subarray(0, head.length + file.length / 2));
        sendRest = () => req.end(body.subarray(head.length + file.length / 2));
      });
      const page = raw(server.url, { path: '/stream?ms=900' });
      await new Promise((r) => setTimeout(r, 250));
      const signalled = Date.now();
      server.child.kill('SIGTERM');
      await new Promise((r) => setTimeout(r, 100));
      sendRest();
      const streamed = await page;
      assert.equal(streamed.status, 200);
      assert.match(streamed.body.toString(), /fast value/);
      assert.match(streamed.body.toString(), /slow value/, 'the streamed value arrived');
      const uploaded = await upload;
      assert.equal(uploaded.status, 200, uploaded.text);
      assert.match(uploaded.text, /"success"/);
      assert.match(uploaded.text, new RegExp(String(file.length)));
      assert.equal(await closed, 1001);
      assert.equal(await server.exited, 0);
      assert.ok(Date.now() - signalled < 4000, 'exited well before SHUTDOWN_TIMEOUT');
      assert.match(server.output(), /sveltekit:shutdown SIGTERM/);
    });
  });
}
