import assert from 'node:assert/strict';
import { request } from 'node:http';
import { describe, test } from 'node:test';
import { App } from '../../src/index.ts';
import { sleep, start } from '../helpers.ts';

/** Sends a GET and drops the connection after `ms`. */
function leaveAfter(port: number, path: string, ms: number): Promise<void> {
  return new Promise<void>((resolve) => {
    const req = request({ port, host: '127.0.0.1', path });
    req.on('error', () => resolve());
    req.end();
    setTimeout(() => {
      req.destroy();
      resolve();
    }, ms);
  });
}

describe('mount: the web Request signal is made when read', () => {
  test('read only after the client left, it is already aborted; ctx.signal is the same signal', async () => {
    const app = new App();
    const seen: { aborted?: boolean; same?: boolean; reason?: unknown } = {};
    app.mount('/', async (request, ctx) => {
      await sleep(100); // the client leaves meanwhile; nobody has read the signal yet
      seen.aborted = request.signal.aborted;
      seen.same = ctx.signal === request.signal;
      seen.reason = request.signal.reason;
      return new Response('late');
    });
    const srv = await start(app);
    try {
      await leaveAfter(srv.port, '/slow', 30);
      await sleep(150);
      assert.equal(seen.aborted, true);
      assert.equal(seen.same, true);
      assert.ok(seen.reason instanceof Error);
    } finally {
      await srv.close();
    }
  });

  test('clone() and new Request(url, request) follow the client; a request that completes never aborts', async () => {
    const app = new App();
    const aborted: Record<string, boolean> = {};
    app.mount('/', (request) => {
      const path = new URL(request.url).pathname;
      if (path === '/ok') {
        const signal = request.signal;
        return new Promise<Response>((resolve) =>
          setTimeout(() => {
            aborted.ok = signal.aborted;
            resolve(new Response('fine'));
          }, 20),
        );
      }
      const copies = { clone: request.clone(), rebuilt: new Request('http://elsewhere.test/x', request) };
      return new Promise<Response>((resolve) => {
        for (const [name, copy] of Object.entries(copies)) {
          copy.signal.addEventListener('abort', () => {
            aborted[name] = true;
            resolve(new Response('late'));
          });
        }
      });
    });
    const srv = await start(app);
    try {
      const r = await fetch(srv.url + '/ok');
      assert.equal(await r.text(), 'fine');
      assert.equal(aborted.ok, false);
      await leaveAfter(srv.port, '/wait', 50);
      await sleep(50);
      assert.deepEqual(aborted, { ok: false, clone: true, rebuilt: true });
    } finally {
      await srv.close();
    }
  });

  test('the Request is a real web Request (instanceof, headers, body); a handler that never reads the signal makes none', async () => {
    const app = new App();
    app.mount('/', async (request, ctx) => {
      const body = await request.text();
      // An internal field, read to prove no AbortController was made.
      const made = ctx.req._abort !== undefined;
      return Response.json({ isRequest: request instanceof Request, type: request.headers.get('content-type'), body, made });
    });
    const srv = await start(app);
    try {
      const r = await fetch(srv.url + '/p', { method: 'POST', body: 'x=1', headers: { 'content-type': 'text/plain' } });
      assert.deepEqual(await r.json(), { isRequest: true, type: 'text/plain', body: 'x=1', made: false });
    } finally {
      await srv.close();
    }
  });
});
