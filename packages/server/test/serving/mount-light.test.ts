// The light web Request of app.mount(): what it answers itself (method, URL, headers, signal,
// whole-body reads) equals what undici's Request answers, everything else goes to a real one
// built on first use, and the cases it must not cover get the real Request from the start.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { describe, test } from 'node:test';
import { App, toWebRequest } from '../../src/index.ts';
import { rawRequest, start, statusOf } from '../helpers.ts';

/** The light Request is its own class (a real one is undici's Request or Tachyon's BridgeRequest). */
function isLight(request: Request): boolean {
  return request.constructor.name === 'LightRequest';
}

/** A server answering with what it received: method, path, content type, the x-hop header, body. */
function echoUpstream() {
  const upstream = new App();
  upstream.mount('/', async (request) =>
    Response.json({
      method: request.method,
      path: new URL(request.url).pathname,
      type: request.headers.get('content-type'),
      hop: request.headers.get('x-hop'),
      body: await request.text(),
    }),
  );
  return start(upstream);
}

describe('mount: the light web Request', () => {
  test('answers method, URL, headers and signal; is instanceof Request; a GET has no body', async () => {
    const app = new App();
    app.mount('/', (request, ctx) =>
      Response.json({
        light: isLight(request),
        isRequest: request instanceof Request,
        tag: Object.prototype.toString.call(request),
        method: request.method,
        url: request.url,
        accept: request.headers.get('accept'),
        headersIsHeaders: request.headers instanceof Headers,
        body: request.body,
        bodyUsed: request.bodyUsed,
        sameSignal: request.signal === ctx.signal,
        // Delegated to a real Request made on demand.
        cache: request.cache,
        mode: request.mode,
        duplex: (request as Request & { duplex: string }).duplex,
      }),
    );
    const srv = await start(app);
    try {
      const r = await fetch(srv.url + '/users/42?fields=a,b', { headers: { accept: 'application/json' } });
      assert.deepEqual(await r.json(), {
        light: true,
        isRequest: true,
        tag: '[object Request]',
        method: 'GET',
        url: `${srv.url}/users/42?fields=a,b`,
        accept: 'application/json',
        headersIsHeaders: true,
        body: null,
        bodyUsed: false,
        sameSignal: true,
        cache: 'default',
        mode: 'cors',
        duplex: 'half',
      });
    } finally {
      await srv.close();
    }
  });

  test('its headers answer as undici’s do (case, repeats, cookies, sorted iteration); a change copies them', async () => {
    const app = new App();
    app.mount('/', (request, ctx) => {
      const real = toWebRequest(ctx.req, '', undefined, { real: true });
      const h = request.headers;
      const answers = (x: Headers) => ({
        entries: [...x],
        keys: [...x.keys()],
        values: [...x.values()],
        get: [x.get('X-Multi'), x.get('cookie'), x.get('nope'), x.has('Accept'), x.has('nope')],
        setCookie: x.getSetCookie(),
      });
      const same = JSON.stringify(answers(h)) === JSON.stringify(answers(real.headers));
      const each: string[] = [];
      h.forEach((value, name) => {
        each.push(`${name}=${value}`);
      });
      const copy = Object.fromEntries(new Headers(h));
      h.set('x-added', '1');
      h.delete('x-multi');
      return Response.json({
        same,
        light: answers(h),
        each,
        copy,
        added: h.get('x-added'),
        cloned: request.clone().headers.get('x-added'),
      });
    });
    const srv = await start(app);
    try {
      const raw = await rawRequest(
        srv.port,
        'GET / HTTP/1.1\r\nHost: a.test\r\nX-Multi: 1\r\nAccept: */*\r\nX-Multi: 2\r\nCookie: a=1\r\nCookie: b=2\r\nConnection: close\r\n\r\n',
      );
      const got = JSON.parse(raw.slice(raw.indexOf('\r\n\r\n') + 4));
      assert.equal(got.same, true);
      assert.deepEqual(got.each, ['accept=*/*', 'connection=close', 'cookie=a=1; b=2', 'host=a.test', 'x-multi=1, 2']);
      assert.deepEqual(got.copy, { accept: '*/*', connection: 'close', cookie: 'a=1; b=2', host: 'a.test', 'x-multi': '1, 2' });
      assert.equal(got.added, '1');
      assert.equal(got.cloned, '1');
      assert.deepEqual(got.light.get, [null, 'a=1; b=2', null, true, false]);
    } finally {
      await srv.close();
    }
  });

  test('text(), json(), arrayBuffer(), bytes() read the body without a stream; a second read is refused', async () => {
    const app = new App();
    app.mount('/', async (request) => {
      const path = new URL(request.url).pathname;
      let value: unknown;
      if (path === '/json') value = await request.json();
      else if (path === '/text') value = await request.text();
      else if (path === '/buffer') {
        const buf = await request.arrayBuffer();
        value = { length: buf.byteLength, first: new Uint8Array(buf)[0] };
      } else if (path === '/bytes') value = Array.from(await request.bytes());
      let second: string;
      try {
        await request.text();
        second = 'read again';
      } catch (err) {
        second = `${(err as Error).name}`;
      }
      return Response.json({ value, bodyUsed: request.bodyUsed, second, light: isLight(request) });
    });
    const srv = await start(app);
    try {
      const post = async (path: string, body: string | Uint8Array) =>
        (await fetch(srv.url + path, { method: 'POST', body: body as BodyInit })).json();
      assert.deepEqual(await post('/json', '{"a":[1,2]}'), { value: { a: [1, 2] }, bodyUsed: true, second: 'TypeError', light: true });
      // A byte order mark is dropped, as undici's text() does.
      assert.deepEqual(await post('/text', '\uFEFFhé'), { value: 'hé', bodyUsed: true, second: 'TypeError', light: true });
      assert.deepEqual(await post('/buffer', new Uint8Array(3000).fill(7)), {
        value: { length: 3000, first: 7 },
        bodyUsed: true,
        second: 'TypeError',
        light: true,
      });
      assert.deepEqual(await post('/bytes', new Uint8Array([1, 2, 3])), {
        value: [1, 2, 3],
        bodyUsed: true,
        second: 'TypeError',
        light: true,
      });
      // Malformed JSON rejects with a SyntaxError (as undici's json() does): the handler lets it go → 500.
      const bad = await fetch(srv.url + '/json', { method: 'POST', body: '{nope' });
      assert.equal(bad.status, 500);
    } finally {
      await srv.close();
    }
  });

  test('a body over the limit read with text() answers 413; read through request.body it errors the stream', async () => {
    const app = new App({ bodyLimit: 1024 });
    app.mount('/', async (request) => {
      if (new URL(request.url).pathname === '/stream') {
        try {
          await new Response(request.body).text();
        } catch {
          return new Response('stream failed', { status: 400 });
        }
      }
      return new Response(await request.text());
    });
    const srv = await start(app);
    try {
      assert.equal((await fetch(srv.url + '/text', { method: 'POST', body: 'x'.repeat(4096) })).status, 413);
      // Chunked: the limit is found while reading.
      const chunked = `POST /text HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n800\r\n${'y'.repeat(2048)}\r\n0\r\n\r\n`;
      assert.equal(statusOf(await rawRequest(srv.port, chunked)), 413);
      const stream = await fetch(srv.url + '/stream', { method: 'POST', body: 'z'.repeat(4096) });
      assert.ok(stream.status === 413 || stream.status === 400, `status ${stream.status}`);
      assert.equal(await (await fetch(srv.url + '/text', { method: 'POST', body: 'small' })).text(), 'small');
    } finally {
      await srv.close();
    }
  });

  test('formData() (urlencoded and multipart), blob() and request.body go through the real Request', async () => {
    const app = new App();
    app.mount('/', async (request) => {
      const path = new URL(request.url).pathname;
      if (path === '/form') {
        const form = await request.formData();
        const file = form.get('file');
        return Response.json({ name: form.get('name'), file: file instanceof File ? [file.name, await file.text()] : null });
      }
      if (path === '/blob') {
        const blob = await request.blob();
        return Response.json({ type: blob.type, size: blob.size });
      }
      const reader = request.body!.getReader();
      let size = 0;
      for (let r = await reader.read(); !r.done; r = await reader.read()) size += r.value.byteLength;
      return Response.json({ size, bodyUsed: request.bodyUsed });
    });
    const srv = await start(app);
    try {
      const urlencoded = await fetch(srv.url + '/form', { method: 'POST', body: new URLSearchParams({ name: 'Ada' }) });
      assert.deepEqual(await urlencoded.json(), { name: 'Ada', file: null });
      const form = new FormData();
      form.append('name', 'Grace');
      form.append('file', new File(['file body'], 'a.txt', { type: 'text/plain' }));
      assert.deepEqual(await (await fetch(srv.url + '/form', { method: 'POST', body: form })).json(), {
        name: 'Grace',
        file: ['a.txt', 'file body'],
      });
      const blob = await fetch(srv.url + '/blob', { method: 'POST', body: 'abc', headers: { 'content-type': 'text/x-test' } });
      assert.deepEqual(await blob.json(), { type: 'text/x-test', size: 3 });
      const streamed = await fetch(srv.url + '/stream', { method: 'POST', body: new Uint8Array(100_000) });
      assert.deepEqual(await streamed.json(), { size: 100_000, bodyUsed: true });
    } finally {
      await srv.close();
    }
  });

  test('new Request(url, request) and fetch(url, request) forward method, headers and body; realRequest gives a real one', async () => {
    const up = await echoUpstream();
    const app = new App();
    app.mount('/proxy', (request) => fetch(up.url + new URL(request.url).pathname, request), { stripPrefix: true });
    // realRequest: a real undici Request per request.
    app.mount(
      '/real',
      (request) => fetch(new Request(request), { redirect: 'manual' }).catch(() => Response.json({ light: isLight(request) })),
      {
        realRequest: true,
      },
    );
    const srv = await start(app);
    try {
      const r = await fetch(srv.url + '/proxy/p', { method: 'PUT', body: 'forwarded', headers: { 'content-type': 'text/x-a' } });
      assert.deepEqual(await r.json(), { method: 'PUT', path: '/p', type: 'text/x-a', hop: null, body: 'forwarded' });
      // fetch(new Request(request)) goes to the request's own URL: this server, /real again, without end;
      // what matters is that undici accepted it, so ask with a Host no one listens on.
      const real = await rawRequest(srv.port, 'GET /real HTTP/1.1\r\nHost: 127.0.0.1:1\r\nConnection: close\r\n\r\n');
      assert.match(real, /"light":false/);
    } finally {
      await srv.close();
      await up.close();
    }
  });

  test('new Request(request) and fetch(request) take the light Request: the globals hand undici the real one behind it', async () => {
    const up = await echoUpstream();
    class Sub extends Request {}
    const app = new App();
    app.mount('/', async (request) => {
      const path = new URL(request.url).pathname;
      if (path === '/copy') {
        const light = isLight(request);
        const copy = new Request(request);
        const sub = new Sub(request.url, { method: 'PATCH' });
        return Response.json({
          light,
          copyIsLight: isLight(copy),
          copyIsRequest: copy instanceof Request,
          subIsSub: sub instanceof Sub && sub.method === 'PATCH',
          method: copy.method,
          url: copy.url,
          type: copy.headers.get('content-type'),
          body: await copy.text(),
          // The body went to the copy, as with undici's own requests.
          used: request.bodyUsed,
          again: (() => {
            try {
              new Request(request);
              return 'accepted';
            } catch (err) {
              return (err as Error).message;
            }
          })(),
        });
      }
      if (path === '/read-then-copy') {
        await request.text();
        try {
          new Request(request);
          return new Response('accepted');
        } catch (err) {
          return new Response(`${(err as Error).name}: ${(err as Error).message}`, { status: 500 });
        }
      }
      // /relay: the request itself to fetch(), with a header changed; its Host is the upstream's.
      const light = isLight(request);
      request.headers.set('x-hop', '1');
      const res = await fetch(request);
      return Response.json({ light, relayed: await res.json() });
    });
    const srv = await start(app);
    try {
      const copy = await fetch(srv.url + '/copy', { method: 'POST', body: 'the body', headers: { 'content-type': 'text/x-a' } });
      assert.deepEqual(await copy.json(), {
        light: true,
        copyIsLight: false,
        copyIsRequest: true,
        subIsSub: true,
        method: 'POST',
        url: `${srv.url}/copy`,
        type: 'text/x-a',
        body: 'the body',
        used: true,
        again: 'Cannot construct a Request with a Request object that has already been used.',
      });
      const read = await fetch(srv.url + '/read-then-copy', { method: 'PUT', body: 'x' });
      assert.equal(read.status, 500);
      assert.equal(await read.text(), 'TypeError: Cannot construct a Request with a Request object that has already been used.');
      // Without a body there is nothing to use up: undici accepts the copy.
      assert.equal(await (await fetch(srv.url + '/read-then-copy')).text(), 'accepted');
      const relay = await rawRequest(
        srv.port,
        `POST /relay HTTP/1.1\r\nHost: 127.0.0.1:${up.port}\r\nContent-Type: text/plain\r\nContent-Length: 7\r\nConnection: close\r\n\r\nrelayed`,
      );
      const json = JSON.parse(relay.slice(relay.indexOf('\r\n\r\n') + 4));
      assert.deepEqual(json, { light: true, relayed: { method: 'POST', path: '/relay', type: 'text/plain', hop: '1', body: 'relayed' } });
    } finally {
      await srv.close();
      await up.close();
    }
  });

  test('URLs the light Request would not write as a parser does get the real one: case, default port, dot segments, quotes', async () => {
    const app = new App();
    app.mount('/', (request) => Response.json({ url: request.url, light: isLight(request) }));
    const srv = await start(app);
    const get = async (path: string, host: string) => {
      const raw = await rawRequest(srv.port, `GET ${path} HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`);
      return JSON.parse(raw.slice(raw.indexOf('\r\n\r\n') + 4)) as { url: string; light: boolean };
    };
    try {
      assert.deepEqual(await get('/a/b?c=1', 'Example.COM:80'), { url: 'http://example.com/a/b?c=1', light: true });
      assert.deepEqual(await get('/a/b', '[::1]:8080'), { url: 'http://[::1]:8080/a/b', light: true });
      assert.deepEqual(await get('/a/../b', 'example.com'), { url: 'http://example.com/b', light: false });
      assert.deepEqual(await get('/a/%2E%2e/b', 'example.com'), { url: 'http://example.com/b', light: false });
      assert.deepEqual(await get("/q?x='1'", 'example.com'), { url: 'http://example.com/q?x=%271%27', light: false });
      assert.deepEqual(await get('/a|b', 'example.com'), { url: 'http://example.com/a|b', light: false });
      // A hostile Host header is replaced, light or not.
      assert.deepEqual(await get('/x', 'evil.com/path'), { url: 'http://localhost/x', light: true });
      const bad = await rawRequest(srv.port, 'GET /x HTTP/1.1\r\nHost: 999.999.999.999\r\nConnection: close\r\n\r\n');
      assert.equal(statusOf(bad), 400);
    } finally {
      await srv.close();
    }
  });

  test('toWebRequest(req, prefix, origin): the origin replaces protocol and host; { real: true } builds undici’s Request', async () => {
    const app = new App();
    app.get('/*', (req) => {
      const light = toWebRequest(req, '/app', 'https://Public.example');
      const real = toWebRequest(req, '/app', 'https://public.example', { real: true });
      return { light: [light.url, isLight(light)], real: [real.url, isLight(real)] };
    });
    const srv = await start(app);
    try {
      assert.deepEqual(await (await fetch(srv.url + '/app/x?y=1')).json(), {
        light: ['https://public.example/x?y=1', true],
        real: ['https://public.example/x?y=1', false],
      });
    } finally {
      await srv.close();
    }
  });
});

// Hono is installed with the benchmark's peers (bench/node_modules), not the workspace.
const honoEntry = new URL('../../../../bench/node_modules/hono/dist/index.js', import.meta.url);

describe('mount: Hono on the light Request', { skip: existsSync(honoEntry) ? false : 'bench/node_modules has no hono' }, () => {
  test('routes, params, query, JSON and form bodies, headers, 404', async () => {
    const { Hono } = (await import(honoEntry.href)) as { Hono: new () => any };
    const hono = new Hono();
    hono.get('/users/:id', (c: any) => c.json({ id: c.req.param('id'), fields: c.req.query('fields'), ua: c.req.header('user-agent') }));
    hono.post('/users', async (c: any) => c.json({ created: await c.req.json() }, 201));
    hono.post('/form', async (c: any) => c.json(await c.req.parseBody()));
    const app = new App();
    app.mount('/api', hono.fetch, { stripPrefix: true });
    const srv = await start(app);
    try {
      const get = await fetch(srv.url + '/api/users/7?fields=a', { headers: { 'user-agent': 'hono-test' } });
      assert.deepEqual(await get.json(), { id: '7', fields: 'a', ua: 'hono-test' });
      const post = await fetch(srv.url + '/api/users', {
        method: 'POST',
        body: '{"name":"Ada"}',
        headers: { 'content-type': 'application/json' },
      });
      assert.equal(post.status, 201);
      assert.deepEqual(await post.json(), { created: { name: 'Ada' } });
      const form = await fetch(srv.url + '/api/form', { method: 'POST', body: new URLSearchParams({ a: '1', b: '2' }) });
      assert.deepEqual(await form.json(), { a: '1', b: '2' });
      assert.equal((await fetch(srv.url + '/api/nowhere')).status, 404);
    } finally {
      await srv.close();
    }
  });
});
