import assert from 'node:assert/strict';
import { request } from 'node:http';
import { describe, test } from 'node:test';
import { App } from '../../src/index.ts';
import { rawRequest, sleep, start } from '../helpers.ts';

describe('mount: web-standard fetch handlers', () => {
  test('method, URL, headers, streamed request body, client address, multi Set-Cookie, streamed response', async () => {
    const app = new App();
    let seen: Record<string, unknown> = {};
    app.mount('/svelte', async (request, ctx) => {
      const body = request.body ? await new Response(request.body).text() : null;
      seen = { method: request.method, url: request.url, ua: request.headers.get('user-agent'), body, ip: ctx.ip };
      const headers = new Headers({ 'content-type': 'text/plain' });
      headers.append('set-cookie', 'a=1; Path=/');
      headers.append('set-cookie', 'b=2; Path=/');
      const stream = new ReadableStream({
        async start(c) {
          c.enqueue(new TextEncoder().encode('hello '));
          await sleep(5);
          c.enqueue(new TextEncoder().encode('world'));
          c.close();
        },
      });
      return new Response(stream, { status: 201, headers });
    });
    app.mount('/stripped', (request) => new Response(new URL(request.url).pathname), { stripPrefix: true });
    app.mount('/kept', (request) => new Response(request.url), { stripPrefix: true });
    const srv = await start(app);
    try {
      const r = await fetch(srv.url + '/svelte/page?x=1', { method: 'POST', body: 'payload', headers: { 'user-agent': 'ua-test' } });
      assert.equal(r.status, 201);
      assert.deepEqual(r.headers.getSetCookie(), ['a=1; Path=/', 'b=2; Path=/']);
      assert.equal(await r.text(), 'hello world');
      assert.deepEqual(seen, {
        method: 'POST',
        url: `http://127.0.0.1:${srv.port}/svelte/page?x=1`,
        ua: 'ua-test',
        body: 'payload',
        ip: '127.0.0.1',
      });
      assert.equal(await (await fetch(srv.url + '/svelte')).text(), 'hello world');
      assert.equal(await (await fetch(srv.url + '/stripped/a/b')).text(), '/a/b');
      assert.equal(await (await fetch(srv.url + '/stripped')).text(), '/');
      // The query stays; the prefix with a trailing slash leaves `/`.
      assert.equal(await (await fetch(srv.url + '/kept/a?x=1')).text(), `${srv.url}/a?x=1`);
      assert.equal(await (await fetch(srv.url + '/kept?x=1')).text(), `${srv.url}/?x=1`);
      assert.equal(await (await fetch(srv.url + '/kept/')).text(), `${srv.url}/`);
    } finally {
      await srv.close();
    }
  });

  test('a large upload streams through request.body with backpressure', async () => {
    const app = new App({ bodyLimit: 64 * 1024 * 1024 });
    app.mount('/', async (request) => {
      let total = 0;
      for await (const chunk of request.body as unknown as AsyncIterable<Uint8Array>) {
        total += chunk.byteLength;
        await sleep(0);
      }
      return Response.json({ total });
    });
    const srv = await start(app);
    try {
      const size = 8 * 1024 * 1024;
      const r = await fetch(srv.url + '/upload', { method: 'PUT', body: new Uint8Array(size) });
      assert.deepEqual(await r.json(), { total: size });
    } finally {
      await srv.close();
    }
  });

  test('the signal aborts when the client leaves; a hostile Host header cannot reshape the URL', async () => {
    const app = new App();
    let aborted = false;
    let url = '';
    app.mount('/', (request) => {
      url = request.url;
      return new Promise<Response>((resolve) => {
        request.signal.addEventListener('abort', () => {
          aborted = true;
          resolve(new Response('late'));
        });
      });
    });
    const srv = await start(app);
    try {
      await new Promise<void>((resolve) => {
        const req = request({ port: srv.port, host: '127.0.0.1', path: '/wait', headers: { host: 'evil.com/@x' } });
        req.on('error', () => resolve());
        req.end();
        setTimeout(() => {
          req.destroy();
          resolve();
        }, 50);
      });
      await sleep(50);
      assert.equal(aborted, true);
      assert.equal(url, `http://localhost/wait`);
    } finally {
      await srv.close();
    }
  });

  test('a body complete at once leaves with Content-Length; a live stream sends its first chunk at once; a client that leaves cancels the stream', async () => {
    const app = new App();
    let cancelled = false;
    app.mount('/', (request) => {
      const path = new URL(request.url).pathname;
      if (path === '/whole') return new Response('hello world', { headers: { 'content-type': 'text/plain' } });
      if (path === '/empty') return new Response('');
      const enc = new TextEncoder();
      return new Response(
        new ReadableStream<Uint8Array>({
          async start(c) {
            c.enqueue(enc.encode('first'));
            await sleep(path === '/forever' ? 60_000 : 300);
            c.enqueue(enc.encode('second'));
            c.close();
          },
          cancel() {
            cancelled = true;
          },
        }),
      );
    });
    const srv = await start(app);
    try {
      const whole = await rawRequest(srv.port, 'GET /whole HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
      assert.match(whole, /\r\ncontent-length: 11\r\n/i);
      assert.doesNotMatch(whole, /transfer-encoding/i);
      assert.match(whole, /\r\n\r\nhello world$/);
      const empty = await fetch(srv.url + '/empty');
      assert.equal(empty.status, 200);
      assert.equal(await empty.text(), '');

      const started = Date.now();
      const res = await fetch(srv.url + '/live');
      const reader = res.body!.getReader();
      assert.equal(new TextDecoder().decode((await reader.read()).value), 'first');
      assert.ok(Date.now() - started < 200, 'the first chunk did not wait for the second');
      let rest = '';
      for (let r = await reader.read(); !r.done; r = await reader.read()) rest += new TextDecoder().decode(r.value);
      assert.equal(rest, 'second');

      await new Promise<void>((resolve) => {
        const req = request({ port: srv.port, host: '127.0.0.1', path: '/forever' }, (r) => {
          r.once('data', () => {
            req.destroy();
            resolve();
          });
        });
        req.end();
      });
      for (let i = 0; i < 50 && !cancelled; i++) await sleep(10);
      assert.equal(cancelled, true, 'the source stream was cancelled when the client left');
    } finally {
      await srv.close();
    }
  });

  test('a fetch handler that throws or returns garbage → 500, process alive', async () => {
    const app = new App();
    app.mount('/throws', () => {
      throw new Error('boom');
    });
    app.mount('/garbage', () => 42 as unknown as Response);
    const srv = await start(app);
    try {
      assert.equal((await fetch(srv.url + '/throws')).status, 500);
      assert.equal((await fetch(srv.url + '/garbage')).status, 200, 'a non-Response value is sent like any returned value');
    } finally {
      await srv.close();
    }
  });
});

describe('request dedup', () => {
  async function setup(respond?: (res: import('../../src/index.ts').Response, n: number) => void) {
    const app = new App();
    let calls = 0;
    app.get('/page', { dedup: true }, async (req, res) => {
      const n = ++calls;
      await sleep(5);
      if (respond) respond(res, n);
      else res.json({ page: 'same for everyone', n });
    });
    app.get('/plain', async () => {
      calls++;
      await sleep(5);
      return { n: calls };
    });
    app.mount(
      '/ssr',
      async () => {
        calls++;
        await sleep(5);
        return new Response('<html>rendered</html>', { headers: { 'content-type': 'text/html' } });
      },
      { dedup: true },
    );
    const srv = await start(app);
    return { srv, calls: () => calls, reset: () => (calls = 0) };
  }

  const burst = (url: string, n: number, init?: RequestInit) =>
    Promise.all(
      Array.from({ length: n }, () => fetch(url, init).then(async (r) => ({ status: r.status, text: await r.text(), headers: r.headers }))),
    );

  test('200 concurrent requests, 5 ms handler → exactly 1 handler call, 200 identical responses', async () => {
    const { srv, calls } = await setup();
    try {
      const results = await burst(srv.url + '/page', 200);
      assert.equal(calls(), 1);
      assert.equal(results.length, 200);
      for (const r of results) {
        assert.equal(r.status, 200);
        assert.equal(r.text, '{"page":"same for everyone","n":1}');
        assert.equal(r.headers.get('content-type'), 'application/json; charset=utf-8');
      }
    } finally {
      await srv.close();
    }
  });

  test('without dedup the same burst runs the handler 200 times', async () => {
    const { srv, calls } = await setup();
    try {
      await burst(srv.url + '/plain', 200);
      assert.equal(calls(), 200);
    } finally {
      await srv.close();
    }
  });

  test('mounts dedup too (streamed web Response bodies are buffered to share)', async () => {
    const { srv, calls } = await setup();
    try {
      const results = await burst(srv.url + '/ssr/', 50);
      assert.equal(calls(), 1);
      assert.ok(results.every((r) => r.text === '<html>rendered</html>'));
    } finally {
      await srv.close();
    }
  });

  test('a live streamed body (still open after 10 ms) streams to the leader at once and is not shared', async () => {
    const app = new App();
    let calls = 0;
    app.mount(
      '/',
      () => {
        const n = ++calls;
        const enc = new TextEncoder();
        // SvelteKit's streamed `load`: the page now, the promise's value 300 ms later.
        const body = new ReadableStream<Uint8Array>({
          async start(c) {
            c.enqueue(enc.encode(`<page ${n}>`));
            await sleep(300);
            c.enqueue(enc.encode('<resolved>'));
            c.close();
          },
        });
        return new Response(body, { headers: { 'content-type': 'text/html' } });
      },
      { dedup: true },
    );
    const srv = await start(app);
    try {
      const started = Date.now();
      const res = await fetch(srv.url + '/stream');
      const reader = res.body!.getReader();
      const first = new TextDecoder().decode((await reader.read()).value);
      const firstAt = Date.now() - started;
      assert.match(first, /^<page \d+>$/);
      assert.ok(firstAt < 200, `first chunk after ${firstAt} ms: the leader's body was held back`);
      let rest = '';
      for (let r = await reader.read(); !r.done; r = await reader.read()) rest += new TextDecoder().decode(r.value);
      assert.equal(rest, '<resolved>');
      // Concurrent requests: every one gets a whole body (followers ran the handler themselves).
      calls = 0;
      const bodies = await Promise.all(Array.from({ length: 5 }, () => fetch(srv.url + '/stream').then((r) => r.text())));
      for (const b of bodies) assert.match(b, /^<page \d+><resolved>$/);
      assert.ok(calls > 1, 'a live body is not shared');
    } finally {
      await srv.close();
    }
  });

  test('the key includes the host: two hosts never share', async () => {
    const { srv, calls } = await setup();
    try {
      const hostA = new Promise<string>((resolve) =>
        request({ port: srv.port, host: '127.0.0.1', path: '/page', headers: { host: 'a.example' } }, (res) => {
          let d = '';
          res.on('data', (c) => (d += c));
          res.on('end', () => resolve(d));
        }).end(),
      );
      const hostB = new Promise<string>((resolve) =>
        request({ port: srv.port, host: '127.0.0.1', path: '/page', headers: { host: 'b.example' } }, (res) => {
          let d = '';
          res.on('data', (c) => (d += c));
          res.on('end', () => resolve(d));
        }).end(),
      );
      await Promise.all([hostA, hostB]);
      assert.equal(calls(), 2);
    } finally {
      await srv.close();
    }
  });

  test('excluded: Cookie, Authorization, X-No-Dedup, POST, different query strings', async () => {
    const { srv, calls, reset } = await setup();
    try {
      for (const headers of [{ cookie: 'sid=1' }, { authorization: 'Bearer x' }, { 'x-no-dedup': '1' }] as Record<string, string>[]) {
        reset();
        await burst(srv.url + '/page', 10, { headers });
        assert.equal(calls(), 10, JSON.stringify(headers));
      }
      reset();
      await Promise.all(Array.from({ length: 10 }, (_, i) => fetch(`${srv.url}/page?v=${i}`).then((r) => r.text())));
      assert.equal(calls(), 10);
      reset();
      await burst(srv.url + '/ssr/', 10, { method: 'POST', body: 'x' });
      assert.equal(calls(), 10);
    } finally {
      await srv.close();
    }
  });

  test('not shared: Set-Cookie, Vary other than Accept-Encoding, bodies over 512 KiB — each waiter runs the handler', async () => {
    const cases: [string, (res: import('../../src/index.ts').Response, n: number) => void][] = [
      ['set-cookie', (res, n) => res.cookie('s', String(n)).send(`n=${n}`)],
      ['vary', (res, n) => res.header('vary', 'User-Agent').send(`n=${n}`)],
      ['big body', (res, n) => res.send(`${n}`.padEnd(600 * 1024, 'x'))],
    ];
    for (const [name, respond] of cases) {
      const { srv, calls } = await setup(respond);
      try {
        const results = await burst(srv.url + '/page', 10);
        assert.ok(calls() > 1, `${name}: the handler ran for the waiters`);
        assert.ok(results.every((r) => r.status === 200));
        if (name === 'set-cookie')
          assert.equal(new Set(results.map((r) => r.headers.get('set-cookie'))).size, calls(), "nobody got someone else's cookie");
      } finally {
        await srv.close();
      }
    }
    // Vary: Accept-Encoding alone is fine to share.
    const { srv, calls } = await setup((res, n) => res.header('vary', 'Accept-Encoding').send(`n=${n}`));
    try {
      await burst(srv.url + '/page', 10);
      assert.equal(calls(), 1);
    } finally {
      await srv.close();
    }
  });
});
