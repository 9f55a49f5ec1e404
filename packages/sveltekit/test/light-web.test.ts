// The adapter's `lightWeb` switch, on the runtime the built app runs (createKit + install on a
// real App and socket). The Kit Server here answers with the classes it was handed and the
// class `new Response()` makes in it; the fixture suites run the same path on real builds.
// Its own file: lightResponses() replaces the global Response for the rest of the process.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { types } from 'node:util';
import { after, describe, it } from 'node:test';
import { App } from '@tachyon/server';
import { createKit, type BuildConfig, type KitServer } from '@tachyon/sveltekit/runtime';

const dir = mkdtempSync(join(tmpdir(), 'tachyon-light-web-'));
const config = (lightWeb: boolean | undefined): BuildConfig => ({
  envPrefix: '',
  base: '',
  appDir: '_app',
  origin: undefined,
  precompress: false,
  wsPath: false,
  prerendered: [],
  ...(lightWeb === undefined ? {} : { lightWeb }),
});
const server: KitServer = {
  async init() {},
  async respond(request) {
    const body = JSON.stringify({
      request: request.constructor.name,
      response: new Response('x').constructor.name,
      method: request.method,
    });
    return new Response(body, { headers: { 'content-type': 'application/json' } });
  },
};

async function ask(lightWeb: boolean | undefined): Promise<{ status: number; length: string | null; body: unknown }> {
  const kit = await createKit({ server, config: config(lightWeb), hooks: null, dir });
  const app = kit.install(new App());
  const srv = await app.listen({ port: 0, host: '127.0.0.1' });
  try {
    const res = await fetch(`http://127.0.0.1:${srv.port}/page`, { method: 'POST', body: 'x', headers: { 'x-no-dedup': '1' } });
    return { status: res.status, length: res.headers.get('content-length'), body: await res.json() };
  } finally {
    await srv.close();
  }
}

describe('@tachyon/sveltekit: lightWeb', () => {
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('false: undici’s Request per request, the global Response left alone', async () => {
    const r = await ask(false);
    assert.equal(r.status, 200);
    assert.deepEqual(r.body, { request: 'BridgeRequest', response: 'Response', method: 'POST' });
    assert.equal(types.isProxy(globalThis.Response), false);
  });

  it('true (and builds made before the option): the light Request and Response, written in one piece', async () => {
    for (const lightWeb of [true, undefined]) {
      const r = await ask(lightWeb);
      assert.equal(r.status, 200);
      assert.deepEqual(r.body, { request: 'LightRequest', response: 'LightResponse', method: 'POST' });
      assert.equal(r.length, String(JSON.stringify(r.body).length));
    }
  });
});
