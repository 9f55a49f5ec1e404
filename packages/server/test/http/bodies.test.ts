import assert from 'node:assert/strict';
import { request } from 'node:http';
import { after, before, describe, test } from 'node:test';
import { z } from 'zod';
import { App } from '../../src/index.ts';
import { rawRequest, sleep, start, statusOf, type Running } from '../helpers.ts';

describe('request bodies', () => {
  let srv: Running;
  let streamedChunks = 0;
  let app: App;
  before(async () => {
    app = new App({ bodyLimit: 1024 });
    app.post('/json', async (req) => ({ got: await req.json() }));
    app.post('/text', async (req) => (await req.text()).toUpperCase());
    app.post('/bytes', async (req) => ({ length: (await req.bytes()).length }));
    app.post('/validated', { body: z.object({ a: z.number() }) }, (req) => ({ a: req.body.a }));
    app.post('/big', { bodyLimit: 10 * 1024 * 1024 }, async (req) => ({ length: (await req.bytes()).length }));
    app.post('/form', async (req) => {
      const form = await req.formData();
      const file = form.get('file') as File | null;
      return { fields: form.getAll('name'), file: file && { name: file.name, type: file.type, text: await file.text() } };
    });
    app.post('/stream', { bodyLimit: 64 * 1024 * 1024 }, async (req) => {
      let total = 0;
      for await (const chunk of req) {
        total += chunk.length;
        streamedChunks++;
        if (streamedChunks % 8 === 0) await sleep(1); // a slow consumer
      }
      return { total };
    });
    app.post('/after-await', async (req) => {
      await sleep(20);
      return { body: await req.text(), type: req.header('content-type') };
    });
    app.post('/ignored', () => 'did not read');
    // Reads the body, swallows the failure (as a mounted framework would) and reports req.bodyError.
    app.post('/body-error', async (req) => {
      const before = req.bodyError;
      const read = await req.bytes().then(
        (b) => b.length,
        () => -1,
      );
      const err = req.bodyError as (Error & { status?: number }) | null;
      return { before, read, error: err && { name: err.name, status: err.status ?? null } };
    });
    srv = await start(app);
  });
  after(() => srv.close());

  const post = (path: string, body: BodyInit, type = 'application/json') =>
    fetch(srv.url + path, { method: 'POST', headers: { 'content-type': type }, body });

  test('json(), text(), bytes()', async () => {
    assert.deepEqual(await (await post('/json', '{"x":[1,2]}')).json(), { got: { x: [1, 2] } });
    assert.equal(await (await post('/text', 'hello', 'text/plain')).text(), 'HELLO');
    assert.deepEqual(await (await post('/bytes', new Uint8Array(300))).json(), { length: 300 });
  });

  test('the body can be read after the handler awaited something else', async () => {
    assert.deepEqual(await (await post('/after-await', 'late read', 'text/plain')).json(), { body: 'late read', type: 'text/plain' });
  });

  test('malformed JSON → 400', async () => {
    const r = await post('/json', '{"x":');
    assert.equal(r.status, 400);
    assert.match((await r.json()).error, /Malformed JSON/);
    assert.equal((await post('/validated', '{nope')).status, 400);
  });

  test('wrong content type on a JSON-validated route → 415', async () => {
    assert.equal((await post('/validated', '{"a":1}', 'text/plain')).status, 415);
    assert.equal((await post('/validated', 'a=1', 'application/x-www-form-urlencoded')).status, 415);
    assert.equal((await post('/validated', '{"a":1}', 'application/vnd.api+json')).status, 200, '+json types count as JSON');
  });

  test('oversized body → 413, by Content-Length and by counting chunked bodies', async () => {
    const r = await post('/json', JSON.stringify({ pad: 'x'.repeat(2000) }));
    assert.equal(r.status, 413);
    const chunked = await rawRequest(
      srv.port,
      'POST /bytes HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nContent-Type: application/octet-stream\r\n\r\n' +
        '400\r\n' +
        'a'.repeat(0x400) +
        '\r\n' +
        '400\r\n' +
        'b'.repeat(0x400) +
        '\r\n0\r\n\r\n',
      { until: /\r\n\r\n[\s\S]*\}/ },
    );
    assert.equal(statusOf(chunked), 413);
    const reported = await rawRequest(
      srv.port,
      'POST /body-error HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n' +
        '400\r\n' +
        'a'.repeat(0x400) +
        '\r\n' +
        '400\r\n' +
        'b'.repeat(0x400) +
        '\r\n0\r\n\r\n',
      { until: /\r\n\r\n[\s\S]*\}/ },
    );
    assert.deepEqual(
      JSON.parse(reported.slice(reported.indexOf('{'))),
      { before: null, read: -1, error: { name: 'HttpError', status: 413 } },
      'req.bodyError says why reading stopped',
    );
    assert.deepEqual(await (await post('/body-error', 'fine')).json(), { before: null, read: 4, error: null });
    // The per-route limit overrides the app's.
    assert.deepEqual(await (await post('/big', new Uint8Array(2 * 1024 * 1024))).json(), { length: 2 * 1024 * 1024 });
  });

  test('__proto__ / constructor.prototype in a JSON body → 400, nothing polluted', async () => {
    const r1 = await post('/json', '{"a":1,"__proto__":{"polluted":true}}');
    assert.equal(r1.status, 400);
    const r2 = await post('/json', '{"nested":{"constructor":{"prototype":{"polluted":true}}}}');
    assert.equal(r2.status, 400);
    // JSON.parse decodes escapes in keys: the same keys spelt with \u escapes are refused too.
    const r3 = await post('/json', '{"\\u005f_proto__":{"polluted":true}}');
    assert.equal(r3.status, 400);
    const r4 = await post('/json', '{"\\u0063onstructor":{"prototype":{"polluted":true}}}');
    assert.equal(r4.status, 400);
    const ok = await post('/json', '{"constructor":"just a string","note":"caf\\u00e9"}');
    assert.equal(ok.status, 200);
    assert.equal(({} as Record<string, unknown>).polluted, undefined);
  });

  test('multipart form data with a file, and urlencoded forms', async () => {
    const form = new FormData();
    form.append('name', 'a');
    form.append('name', 'b');
    form.append('file', new File(['file body'], 'note.txt', { type: 'text/plain' }));
    const r = await fetch(srv.url + '/form', { method: 'POST', body: form });
    assert.deepEqual(await r.json(), { fields: ['a', 'b'], file: { name: 'note.txt', type: 'text/plain', text: 'file body' } });
    const u = await post('/form', 'name=x&name=y%20z', 'application/x-www-form-urlencoded');
    assert.deepEqual(await u.json(), { fields: ['x', 'y z'], file: null });
    assert.equal((await post('/form', 'nope', 'text/plain')).status, 415);
  });

  test('a large upload streams through async iteration with backpressure', async () => {
    const size = 16 * 1024 * 1024;
    const r = await post('/stream', new Uint8Array(size), 'application/octet-stream');
    assert.deepEqual(await r.json(), { total: size });
    assert.ok(streamedChunks > 10, 'arrived in many chunks');
  });

  test('a body nobody reads does not break the next request on the same connection', async () => {
    const raw = await rawRequest(
      srv.port,
      'POST /ignored HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhelloGET /missing HTTP/1.1\r\nHost: x\r\n\r\n',
      { until: /404 Not Found[\s\S]*\}/ },
    );
    assert.match(raw, /^HTTP\/1\.1 200/);
    assert.match(raw, /HTTP\/1\.1 404/);
  });

  test('client abort in the middle of an upload, 1000 times: no crash, no leak', async () => {
    for (let i = 0; i < 1000; i++) {
      await new Promise<void>((resolve) => {
        const req = request({
          port: srv.port,
          host: '127.0.0.1',
          method: 'POST',
          path: '/stream',
          headers: { 'content-length': '100000' },
        });
        req.on('error', () => resolve());
        req.write(Buffer.alloc(1000), () => {
          req.destroy();
          resolve();
        });
      });
    }
    await sleep(100);
    assert.deepEqual(await (await post('/json', '{"alive":true}')).json(), { got: { alive: true } });
    assert.equal(app.inflight, 0, 'every aborted request was released');
  });
});

describe('streaming multipart (req.multipart)', () => {
  test('a large file streams through busboy in order with fields; limits answer 413; bad input 400/415', async () => {
    const { createHash } = await import('node:crypto');
    const app = new App({ bodyLimit: 64 * 1024 * 1024 });
    app.post('/upload', async (req) => {
      const out: Record<string, unknown>[] = [];
      for await (const part of req.multipart({ fileSize: 16 * 1024 * 1024 })) {
        if (part.kind === 'field') out.push({ field: part.name, value: part.value });
        else {
          const hash = createHash('sha256');
          let size = 0;
          for await (const chunk of part.stream) {
            hash.update(chunk);
            size += chunk.length;
          }
          out.push({ file: part.name, filename: part.filename, type: part.type, size, sha256: hash.digest('hex') });
        }
      }
      return out;
    });
    app.post('/small-limit', async (req) => {
      for await (const part of req.multipart({ fileSize: 1000, files: 1 })) if (part.kind === 'file') part.stream.resume();
      return 'ok';
    });
    const srv = await start(app);
    try {
      const big = Buffer.alloc(8 * 1024 * 1024);
      for (let i = 0; i < big.length; i++) big[i] = (i * 31) & 0xff;
      const form = new FormData();
      form.append('title', 'holiday');
      form.append('video', new File([big], 'clip.bin', { type: 'application/octet-stream' }));
      form.append('after', 'yes');
      const r = await fetch(srv.url + '/upload', { method: 'POST', body: form });
      assert.equal(r.status, 200);
      assert.deepEqual(await r.json(), [
        { field: 'title', value: 'holiday' },
        {
          file: 'video',
          filename: 'clip.bin',
          type: 'application/octet-stream',
          size: big.length,
          sha256: createHash('sha256').update(big).digest('hex'),
        },
        { field: 'after', value: 'yes' },
      ]);

      // Over a limit the server answers 413 at once and closes (the rest is never read):
      // a raw socket reads that answer where fetch would report the broken upload instead.
      const multipartBody = (files: [string, number][]) =>
        files
          .map(
            ([name, size]) =>
              `--B\r\nContent-Disposition: form-data; name="${name}"; filename="${name}.bin"\r\nContent-Type: application/octet-stream\r\n\r\n${'z'.repeat(size)}\r\n`,
          )
          .join('') + '--B--\r\n';
      for (const files of [
        [['f', 5000]],
        [
          ['a', 1],
          ['b', 1],
        ],
      ] as [string, number][][]) {
        const body = multipartBody(files);
        const raw = await rawRequest(
          srv.port,
          `POST /small-limit HTTP/1.1\r\nHost: x\r\nContent-Type: multipart/form-data; boundary=B\r\nContent-Length: ${body.length}\r\n\r\n${body}`,
          { until: /\}$/ },
        );
        assert.equal(statusOf(raw), 413, JSON.stringify(files));
      }
      assert.equal(
        (await fetch(srv.url + '/upload', { method: 'POST', body: 'plain', headers: { 'content-type': 'text/plain' } })).status,
        415,
      );
      const malformed = await fetch(srv.url + '/upload', {
        method: 'POST',
        body: '--zzz\r\nContent-Disposition: form-data; name="a"\r\n\r\nunterminated',
        headers: { 'content-type': 'multipart/form-data; boundary=zzz' },
      });
      assert.equal(malformed.status, 400);
      assert.equal(
        (await fetch(srv.url + '/upload', { method: 'POST', body: 'x', headers: { 'content-type': 'multipart/form-data' } })).status,
        400,
        'no boundary',
      );
    } finally {
      await srv.close();
    }
  });

  // Fuzz finding (fuzz/targets/multipart.mjs): busboy destroyed the open file's stream with its
  // own plain Error, so `pipeline(part.stream, …)` rejected with it and the request got a 500.
  test('a body that ends inside a file: pipeline() on the file rejects with the 400, not a 500', async () => {
    const { pipeline } = await import('node:stream/promises');
    const { Writable } = await import('node:stream');
    const app = new App();
    const seen: unknown[] = [];
    app.post('/upload', async (req) => {
      for await (const part of req.multipart()) {
        if (part.kind !== 'file') continue;
        const sink = new Writable({ write: (_chunk, _enc, cb) => cb() });
        await pipeline(part.stream, sink).catch((err) => {
          seen.push(err);
          throw err;
        });
      }
      return 'ok';
    });
    const srv = await start(app);
    try {
      for (const body of [
        '--zzz\r\nContent-Disposition: form-data; name="f"; filename="a.txt"\r\n\r\nunterminated',
        '--zzz\r\nContent-Disposition: form-data; name="a"\r\n\r\n1\r\n--zzz\r\nContent-Disposition: form-data; name="f"; filename="a.txt"\r\n\r\npart',
      ]) {
        const r = await fetch(srv.url + '/upload', {
          method: 'POST',
          body,
          headers: { 'content-type': 'multipart/form-data; boundary=zzz' },
        });
        assert.equal(r.status, 400, body);
      }
      assert.equal(seen.length, 2);
      for (const err of seen) assert.equal((err as { status?: number }).status, 400);
    } finally {
      await srv.close();
    }
  });
});
