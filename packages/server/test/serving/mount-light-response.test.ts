// The light web Response (lightResponses()): `new Response(string | bytes | null, init)` makes
// an object that answers as undici's Response does, every other construction is undici's own
// (with its errors), and app.mount() writes a light one from its body in one end(): the
// bytes on the wire equal what the streamed undici Response produced.
import assert from 'node:assert/strict';
import { gunzipSync } from 'node:zlib';
import { after, describe, test } from 'node:test';
import { lightResponses, type FetchHandler } from '../../src/index.ts';
import { mountAnswer } from './mount-answer.ts';

const WebResponse = globalThis.Response;
const isLight = (r: Response): boolean => r.constructor.name === 'LightResponse';

describe('lightResponses(): the light web Response', () => {
  after(() => lightResponses(false));

  test('new Response(string) answers status, headers, text() and json() without undici; a second read is refused', async () => {
    lightResponses();
    const r = new Response('{"a":1}', { status: 201, headers: { 'x-a': '1' } });
    assert.ok(isLight(r));
    assert.ok(r instanceof Response && r instanceof WebResponse);
    assert.equal(Object.prototype.toString.call(r), '[object Response]');
    assert.deepEqual([r.status, r.ok, r.statusText, r.type, r.url, r.redirected], [201, true, '', 'default', '', false]);
    assert.deepEqual(
      [...r.headers],
      [
        ['content-type', 'text/plain;charset=UTF-8'],
        ['x-a', '1'],
      ],
    );
    assert.equal(r.bodyUsed, false);
    const copy = r.clone();
    assert.deepEqual(await r.json(), { a: 1 });
    assert.equal(r.bodyUsed, true);
    await assert.rejects(r.text(), TypeError);
    assert.throws(() => r.clone(), TypeError);
    // The clone is its own: its body and headers.
    copy.headers.set('x-a', '2');
    assert.equal(r.headers.get('x-a'), '1');
    assert.equal(await copy.text(), '{"a":1}');
    // Bytes are copied, as undici copies them: the caller may reuse its buffer.
    const buf = new Uint8Array([104, 105]);
    const bytes = new Response(buf);
    buf[0] = 0;
    assert.ok(isLight(bytes));
    assert.equal(bytes.headers.get('content-type'), null);
    assert.deepEqual([...(await bytes.bytes())], [104, 105]);
    assert.deepEqual(new Uint8Array(await new Response('hé').arrayBuffer()), new TextEncoder().encode('hé'));
    // A null body: nothing to use up, as with undici.
    const empty = new Response(null, { status: 204 });
    assert.equal(empty.body, null);
    assert.equal(await empty.text(), '');
    assert.equal(empty.bodyUsed, false);
  });

  test('body, blob() and the rest go to a real Response made on first use', async () => {
    lightResponses();
    const r = new Response('streamed', { headers: { 'content-type': 'text/x-a' } });
    const reader = r.body!.getReader();
    assert.equal(new TextDecoder().decode((await reader.read()).value), 'streamed');
    assert.equal(r.bodyUsed, true);
    const b = new Response('blob');
    assert.equal(await (await b.blob()).text(), 'blob');
    assert.equal(
      (await new Response('a=1', { headers: { 'content-type': 'application/x-www-form-urlencoded' } }).formData()).get('a'),
      '1',
    );
    // After text(), the real one is made as undici leaves a read body: used, and refused.
    const t = new Response('x');
    await t.text();
    assert.equal(t.bodyUsed, true);
    assert.equal(await t.blob().catch((e: Error) => e.name), 'TypeError');
  });

  test('every other construction is undici’s own, errors included; lightResponses(false) puts it back', () => {
    lightResponses();
    const real = (r: Response) => !isLight(r) && r instanceof WebResponse;
    assert.ok(real(new Response(new ReadableStream())));
    assert.ok(real(new Response(new Blob(['x']))));
    assert.ok(real(new Response('x', { statusText: 'Fine' })));
    assert.ok(real(new Response('x', new WebResponse('y', { status: 202 }))));
    assert.ok(real(Response.redirect('http://a/', 302))); // Response.json() is light: light-response-headers.test.ts
    class Sub extends Response {}
    const sub = new Sub('x');
    assert.ok(sub instanceof Sub && real(sub));
    assert.throws(() => new Response('x', { status: 99 }), RangeError);
    assert.throws(() => new Response('x', { status: 204 }), TypeError);
    assert.throws(() => new Response('x', { headers: { 'bad name': '1' } }), TypeError);
    assert.throws(() => new Response('x', { headers: { a: 'line\nbreak' } }), TypeError);
    lightResponses(false);
    assert.equal(globalThis.Response, WebResponse);
    assert.ok(!isLight(new Response('x')));
  });

  test('app.mount writes a light Response as the streamed undici one was written: status, headers, cookies, HEAD, 204, bytes, read', async () => {
    const handler: FetchHandler = async (request) => {
      const path = new URL(request.url).pathname;
      if (path === '/peeked') {
        // Read through a clone, then its body touched: the real Response is made and streamed.
        const r = new Response('peeked');
        await r.clone().text();
        void r.body;
        return r;
      }
      if (path === '/used') {
        const r = new Response('used');
        await r.text();
        return r;
      }
      if (path === '/none') return new Response(null, { status: 204, headers: { 'x-n': '1' } });
      if (path === '/bytes') return new Response(new Uint8Array([1, 2, 3]), { status: 202 });
      const headers = new Headers({ 'content-type': 'text/html', 'x-a': 'b' });
      headers.append('set-cookie', 'a=1; Path=/');
      headers.append('set-cookie', 'b=2; Path=/');
      return new Response('<p>hello</p>', { status: 201, headers });
    };
    const requests = ['/', '/none', '/bytes', '/peeked', '/used'].map((p) => `GET ${p} HTTP/1.1\nHost: a`);
    requests.splice(1, 0, 'HEAD / HTTP/1.1\nHost: a');
    lightResponses(false);
    const undici = [];
    // Left off: app.mount() would turn the light Response on again (its default).
    for (const r of requests) undici.push(await mountAnswer(handler, r, { lightResponses: false }));
    assert.equal(globalThis.Response, WebResponse);
    lightResponses();
    const light = [];
    for (const r of requests) light.push(await mountAnswer(handler, r));
    assert.deepEqual(light, undici);
    assert.match(light[0]!, /^HTTP\/1\.1 201 Created\r\n/);
    assert.match(light[0]!, /\r\ncontent-length: 12\r\n/i);
    assert.match(light[0]!, /set-cookie: a=1; Path=\/\r\nset-cookie: b=2; Path=\/\r\n/i);
    assert.match(light[0]!, /\r\n\r\n<p>hello<\/p>$/);
    assert.match(light[1]!, /\r\n\r\n$/);
    assert.match(light[2]!, /^HTTP\/1\.1 204 No Content\r\n/);
    assert.ok(light[3]!.endsWith('\r\n\r\n\u0001\u0002\u0003'));
    assert.match(light[4]!, /\r\n\r\npeeked$/);
    // An answer whose body was read is refused, as undici's used (locked) stream was.
    assert.match(light[5]!, /^HTTP\/1\.1 500 /);
  });

  test('app.mount: a light Response is compressed as a string is', async () => {
    lightResponses();
    const page = '<p>' + 'hello '.repeat(400) + '</p>';
    const gz = await mountAnswer(
      () => new Response(page, { headers: { 'content-type': 'text/html' } }),
      'GET / HTTP/1.1\nHost: a\nAccept-Encoding: gzip',
      {
        compress: true,
      },
    );
    assert.match(gz, /content-encoding: gzip/i);
    assert.equal(gunzipSync(Buffer.from(gz.slice(gz.indexOf('\r\n\r\n') + 4), 'latin1')).toString(), page);
  });
});
