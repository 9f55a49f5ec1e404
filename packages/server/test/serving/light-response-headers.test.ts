// A light Response's headers given as a plain record are kept as checked lines, not an undici
// Headers (web-response-headers.ts): what they hold, the order they iterate and go out in,
// and every refusal must equal undici's own. Checked against undici itself, on chosen edge
// cases and on generated records; then Response.json() and app.mount()'s default.
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { lightResponses, type FetchHandler, type MountOptions } from '../../src/index.ts';
import { mountAnswer } from './mount-answer.ts';

const WebResponse = globalThis.Response;
const isLight = (r: Response): boolean => r.constructor.name === 'LightResponse';

/** What a Response built from `body` and `init` shows: status, headers, body; or the error's class. */
async function outcome(make: () => Response): Promise<unknown> {
  let r: Response;
  try {
    r = make();
  } catch (err) {
    return `throws ${(err as Error).constructor.name}`;
  }
  return [r.status, [...r.headers], await r.text()];
}

/** The same construction through the light Response and through undici's. */
async function both(body: unknown, init: unknown): Promise<[light: unknown, undici: unknown]> {
  lightResponses();
  const light = await outcome(() => new Response(body as BodyInit, init as ResponseInit));
  const undici = await outcome(() => new WebResponse(body as BodyInit, init as ResponseInit));
  return [light, undici];
}

describe('light Response headers from a plain record', () => {
  after(() => lightResponses(false));
  const answer = (handler: FetchHandler, options?: MountOptions) => mountAnswer(handler, 'GET / HTTP/1.1\nHost: a', options);

  test('edge cases hold, iterate and fail as undici’s Headers do', async () => {
    lightResponses();
    // Lines, not a Headers, where the record is plain (the Headers is made when first read).
    const plain = new Response('x', { headers: { 'Content-Type': 'text/html', 'x-a': 'b' } });
    assert.ok(isLight(plain) && Object.getOwnPropertyNames(plain).length === 0);
    const odd = { a: '1' };
    Object.defineProperty(odd, 'b', { value: '2', enumerable: false });
    const hiddenSymbol = { a: '1' };
    Object.defineProperty(hiddenSymbol, Symbol('s'), { value: '2', enumerable: false });
    const records: unknown[] = [
      { 'x-mw': '1', 'content-type': 'application/json' },
      { 'Content-Type': 'text/html', 'X-A': 'b' },
      { A: '1', a: '2' }, // joined with ", " by undici
      { b: ' padded ', c: '\ttab' }, // trimmed by undici
      { '10': 'x', '9': 'y', z: '' },
      { n: 5 as unknown as string }, // converted by undici
      { latin: 'é\u0001' },
      odd, // non-enumerable keys count for undici
      Object.assign(Object.create(null), { q: '1' }),
      { 'bad name': '1' },
      { a: 'line\nbreak' },
      { a: 'nul\0' },
      { a: '€' },
      { é: '1' },
      { [Symbol('s')]: '1' },
      hiddenSymbol, // a non-enumerable symbol key: undici throws for it too
      { 'set-cookie': 'a=1; Path=/' },
      {},
    ];
    for (const headers of records)
      for (const body of ['text', null, new Uint8Array([1])]) {
        const [light, undici] = await both(body, { status: 201, headers });
        assert.deepEqual(light, undici, `headers ${String(Object.keys(headers as object))}, body ${String(body)}`);
      }
  });

  test('generated records: the same headers, order and errors as undici', async () => {
    const names = ['a', 'B', 'content-type', 'Content-Type', 'x-mw', 'set-cookie', '1', 'z~', 'bad name', 'é'];
    const values = ['1', '', ' x', 'x ', 'a, b', 'text/html', 'é', '€', 'a\rb', '\u0001'];
    let seed = 7;
    const next = (n: number) => (seed = (seed * 1103515245 + 12345) >>> 0) % n;
    let refused = 0;
    for (let i = 0; i < 300; i++) {
      const headers: Record<string, string> = {};
      for (let k = next(5); k > 0; k--) headers[names[next(names.length)]!] = values[next(values.length)]!;
      const [light, undici] = await both(next(2) === 0 ? 'body' : null, { headers });
      assert.deepEqual(light, undici, JSON.stringify(headers));
      if (typeof undici === 'string') refused++;
    }
    // Both kinds were generated: records undici takes and records it refuses.
    assert.ok(refused > 30 && refused < 270, `${refused} refused`);
  });

  test('a light Response whose headers were never read keeps them as lines; reading or changing them works as on undici’s', async () => {
    lightResponses();
    const r = new Response('x', { headers: { 'X-B': '2', 'x-a': '1' } });
    assert.ok(isLight(r));
    const h = r.headers;
    assert.ok(h instanceof Headers);
    assert.equal(r.headers, h); // made once
    h.set('x-c', '3');
    assert.deepEqual(
      [...r.headers],
      [
        ['content-type', 'text/plain;charset=UTF-8'],
        ['x-a', '1'],
        ['x-b', '2'],
        ['x-c', '3'],
      ],
    );
    // A clone's headers are its own, before and after they were read.
    const fresh = new Response('y', { headers: { 'x-a': '1' } });
    const copy = fresh.clone();
    copy.headers.set('x-a', '2');
    assert.equal(fresh.headers.get('x-a'), '1');
  });

  test('Response.json() is light where new Response() would be, undici’s own (errors included) elsewhere', async () => {
    lightResponses();
    const cases: [unknown, unknown][] = [
      [{ a: 'é', b: [1, null] }, undefined],
      [[1], { status: 201, headers: { 'x-a': '1' } }],
      ['s', { headers: { 'Content-Type': 'application/vnd.x+json' } }],
      [{ a: 1 }, { status: 200, statusText: 'Fine' }],
      [{ a: 1 }, { status: 204 }],
      [{ a: 1 }, { status: 99 }],
      [undefined, undefined],
      [() => 1, undefined],
      [{ a: '\ud800' }, undefined],
    ];
    for (const [data, init] of cases) {
      const light = await outcome(() => Response.json(data, init as ResponseInit));
      const undici = await outcome(() => WebResponse.json(data, init as ResponseInit));
      assert.deepEqual(light, undici, JSON.stringify(data));
    }
    assert.ok(isLight(Response.json({ a: 1 })));
    assert.ok(!isLight(Response.json({ a: 1 }, { statusText: 'Fine' })));
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    assert.throws(() => Response.json(cyclic), TypeError);
    assert.throws(() => Response.json(1n), TypeError);
    assert.throws(() => (Response.json as (...a: unknown[]) => Response)(), TypeError);
    assert.equal(Response.json.name, 'json');
    lightResponses(false);
    assert.ok(!isLight(Response.json({ a: 1 })));
  });

  test('app.mount() turns light Responses on by default and writes the same bytes as undici’s; lightResponses: false leaves the global alone', async () => {
    lightResponses(false);
    const handler: FetchHandler = () =>
      new Response('{"a":1}', { status: 201, headers: { 'X-Mw': '1', 'cache-control': 'no-store', 'content-type': 'application/json' } });
    const undici = await answer(handler, { lightResponses: false });
    assert.equal(globalThis.Response, WebResponse);
    const light = await answer(handler);
    assert.notEqual(globalThis.Response, WebResponse);
    assert.ok(isLight(new Response('x')));
    assert.equal(light, undici);
    // Response.json(), light now, adds the same Content-Type.
    const json = await answer(() => Response.json({ a: 1 }, { status: 201, headers: { 'X-Mw': '1', 'cache-control': 'no-store' } }));
    assert.equal(json, undici);
    assert.match(light, /^HTTP\/1\.1 201 Created\r\n/);
    assert.match(light, /\r\ncache-control: no-store\r\ncontent-type: application\/json\r\nx-mw: 1\r\n/);
  });
});
