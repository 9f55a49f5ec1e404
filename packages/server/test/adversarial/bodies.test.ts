// Hostile request bodies: multipart abuse, deep and poisoned JSON. Each answer is a clear 4xx,
// never a 500, a hang or a stalled event loop.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { z } from 'zod';
import { App } from '../../src/index.ts';
import { recordingLogger, start, type Running } from '../helpers.ts';

describe('hostile bodies', () => {
  let running: Running;
  const log = recordingLogger();
  before(async () => {
    const app = new App({ logger: log.logger, bodyLimit: 32 * 1024 * 1024 });
    app.post('/form', async (req) => {
      const form = await req.formData();
      return { keys: [...new Set(form.keys())], count: [...form.keys()].length };
    });
    app.post('/schema', { body: z.record(z.string(), z.unknown()), consumes: ['multipart', 'json'] }, (req) => ({
      keys: Object.keys(req.body).length,
      sizes: Object.values(req.body).map((v) => (Array.isArray(v) ? v.length : 1)),
    }));
    app.post('/json', async (req) => ({ type: typeof (await req.json()) }));
    running = await start(app);
  });
  after(() => running.close());

  const multipart = (body: string | Uint8Array<ArrayBuffer>, boundary = 'B') => ({
    method: 'POST',
    headers: { 'content-type': `multipart/form-data; boundary=${boundary}` },
    body,
  });
  const field = (name: string, value: string) => `--B\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`;

  test('a truncated multipart body is 400, not an empty or partial form', async () => {
    const whole = field('a', 'hello') + field('b', 'world') + '--B--\r\n';
    for (const cut of [20, whole.length - 12, whole.length - 3]) {
      for (const path of ['/form', '/schema']) {
        const res = await fetch(`${running.url}${path}`, multipart(whole.slice(0, cut)));
        assert.equal(res.status, 400, `${path} cut at ${cut}: ${await res.text()}`);
      }
    }
    const ok = await fetch(`${running.url}/form`, multipart(whole));
    assert.deepEqual(await ok.json(), { keys: ['a', 'b'], count: 2 });
  });

  test('garbage, an empty body, or no boundary is 400; an empty form is fine', async () => {
    for (const body of ['hello world', '', '\r\n\r\n--C--\r\n']) {
      const res = await fetch(`${running.url}/form`, multipart(body));
      assert.equal(res.status, 400, JSON.stringify(body));
    }
    const none = await fetch(`${running.url}/form`, {
      method: 'POST',
      headers: { 'content-type': 'multipart/form-data' },
      body: field('a', '1') + '--B--\r\n',
    });
    assert.equal(none.status, 400);
    const empty = await fetch(`${running.url}/form`, multipart('--B--\r\n'));
    assert.deepEqual(await empty.json(), { keys: [], count: 0 });
  });

  test('20,000 same-name parts take linear time (no quadratic merge)', async () => {
    const body = field('x', 'v').repeat(20_000) + '--B--\r\n';
    const t0 = performance.now();
    const res = await fetch(`${running.url}/schema`, multipart(body));
    const ms = performance.now() - t0;
    assert.equal(res.status, 200);
    assert.deepEqual(await res.json(), { keys: 1, sizes: [20_000] });
    // Quadratic merging took ~1.4 s here; linear is tens of ms. A wide margin for slow machines.
    assert.ok(ms < 700, `took ${ms.toFixed(0)} ms`);
  });

  // Both inner values make parseJson walk the keys (a \u escape, "proto" in a key), which refuses
  // nesting past MAX_JSON_DEPTH instead of overflowing the stack.
  test('JSON nested 100,000 deep with \\u escapes or a "prototype" key is 400, not 500', async () => {
    for (const inner of ['"\\u0061"', '{"prototype":1}']) {
      const depth = 100_000;
      const body = '['.repeat(depth) + inner + ']'.repeat(depth);
      for (const path of ['/json', '/schema']) {
        const res = await fetch(`${running.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
        assert.equal(res.status, 400, `${path} ${inner}: ${await res.text()}`);
      }
    }
    assert.ok(!log.entries.some((e) => e.level === 'error'), 'no error logs (500s) for hostile JSON');
  });

  test('poisoned keys are refused at any depth, spelt out or escaped', async () => {
    for (const body of ['{"a":{"b":{"__proto__":{"x":1}}}}', '{"\\u005f_proto__":{}}', '[{"constructor":{"prototype":{"x":1}}}]']) {
      const res = await fetch(`${running.url}/json`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
      assert.equal(res.status, 400, body);
    }
    const fine = await fetch(`${running.url}/json`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"constructor":"a string is fine","deep":' + '['.repeat(400) + ']'.repeat(400) + '}',
    });
    assert.equal(fine.status, 200);
  });
});
