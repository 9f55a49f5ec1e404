// serialize: 'compiled' (docs/response.md): a route's reply schemas compiled by
// fast-json-stringify, with a real server. Declared shapes are written by the compiled
// function (undeclared properties left out); statuses without a schema keep JSON.stringify; a
// reply that does not fit fails like any handler error (500, logged); bad options and schemas
// that cannot be compiled are refused with the route named.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { z } from 'zod';
import { App } from '../../src/index.ts';
import { recordingLogger, start } from '../helpers.ts';

const User = z.object({ id: z.number(), name: z.string(), roles: z.array(z.string()) });
const Problem = z.object({ error: z.string() });
const untyped = (value: unknown): never => value as never;

function makeApp(options: { validateResponses?: boolean } = {}) {
  const log = recordingLogger();
  const app = new App({ logger: log.logger, ...options });
  app.get('/user/:n', { response: { 200: User, '4XX': Problem }, serialize: 'compiled' }, (req, res) => {
    const n = req.params.n;
    if (n === 'extra') return untyped({ id: 1, name: 'ada', roles: ['admin'], password: 'hunter2' });
    if (n === 'missing') return res.status(404).json({ error: 'no such user' });
    if (n === 'broken') return untyped({ id: 1 }); // name and roles missing
    if (n === 'undeclared') return res.status(500).json(untyped({ anything: true, nested: { a: 1 } }));
    if (n === 'json') return res.json({ id: 2, name: 'via res.json', roles: [] });
    return { id: 1, name: 'ada "the first"\n', roles: ['reader', 'editor'] };
  });
  app.get('/plain', { response: { 200: User } }, () => untyped({ id: 1, name: 'p', roles: [], extra: true }));
  return { app, log };
}

describe("serialize: 'compiled'", () => {
  test('declared replies are written by the compiled serializer: same JSON, undeclared properties left out', async () => {
    const { app } = makeApp();
    const srv = await start(app);
    try {
      const ok = await fetch(`${srv.url}/user/1`);
      assert.equal(ok.status, 200);
      assert.match(ok.headers.get('content-type') ?? '', /^application\/json/);
      assert.deepEqual(await ok.json(), { id: 1, name: 'ada "the first"\n', roles: ['reader', 'editor'] });
      const viaJson = await fetch(`${srv.url}/user/json`);
      assert.deepEqual(await viaJson.json(), { id: 2, name: 'via res.json', roles: [] });
      // The compiled function writes only what the schema declares (as the schema's parse would keep).
      const extra = await (await fetch(`${srv.url}/user/extra`)).text();
      assert.equal(extra.includes('hunter2'), false);
      assert.deepEqual(JSON.parse(extra), { id: 1, name: 'ada', roles: ['admin'] });
      // A status class schema covers 404.
      const missing = await fetch(`${srv.url}/user/missing`);
      assert.equal(missing.status, 404);
      assert.deepEqual(await missing.json(), { error: 'no such user' });
      // A route without the option keeps JSON.stringify: every property is written.
      assert.deepEqual(await (await fetch(`${srv.url}/plain`)).json(), { id: 1, name: 'p', roles: [], extra: true });
    } finally {
      await srv.close();
    }
  });

  test('a status without a schema keeps JSON.stringify', async () => {
    const { app } = makeApp();
    const srv = await start(app);
    try {
      const r = await fetch(`${srv.url}/user/undeclared`);
      assert.equal(r.status, 500);
      assert.deepEqual(await r.json(), { anything: true, nested: { a: 1 } });
    } finally {
      await srv.close();
    }
  });

  test('a reply missing a required property is a 500 with a log line, and the server goes on', async () => {
    const { app, log } = makeApp();
    const srv = await start(app);
    try {
      const r = await fetch(`${srv.url}/user/broken`);
      assert.equal(r.status, 500);
      const body = await r.text();
      assert.equal(body.includes('"id":1'), false, 'no partial reply is sent');
      assert.ok(
        log.entries.some((e) => e.level === 'error'),
        `an error line: ${JSON.stringify(log.entries)}`,
      );
      assert.equal((await fetch(`${srv.url}/user/1`)).status, 200);
    } finally {
      await srv.close();
    }
  });

  test('with validateResponses on, a valid reply passes and an extra property is checked before it is left out', async () => {
    const { app } = makeApp({ validateResponses: true });
    const srv = await start(app);
    try {
      assert.equal((await fetch(`${srv.url}/user/1`)).status, 200);
      // The check sees the payload as written: the compiled serializer dropped the extra property.
      assert.equal((await fetch(`${srv.url}/user/extra`)).status, 200);
    } finally {
      await srv.close();
    }
  });

  test('bad options are refused at declaration, naming the route', () => {
    const app = new App();
    assert.throws(() => app.get('/a', { serialize: 'compiled' }, () => 'x'), /GET \/a: serialize: 'compiled' needs response schemas/);
    assert.throws(
      () => app.get('/b', { response: { 200: User }, serialize: untyped('fast') }, () => untyped({})),
      /GET \/b: serialize must be 'json' or 'compiled'/,
    );
  });

  test('a schema with no JSON Schema fails the start, naming the route and the status', async () => {
    const opaque = {
      '~standard': { version: 1, vendor: 'hand-made', validate: (value: unknown) => ({ value }) },
    } as const;
    const app = new App({ logger: recordingLogger().logger });
    app.get('/opaque', { response: { 201: opaque }, serialize: 'compiled' }, () => untyped({}));
    await assert.rejects(
      app.listen({ port: 0, host: '127.0.0.1' }),
      /GET \/opaque: serialize: 'compiled': the 201 reply schema has no JSON Schema/,
    );
  });
});
