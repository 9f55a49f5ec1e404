// The OpenAPI 3.1 document: generated from a realistic app and a 200-route fixture, validated
// with an OpenAPI 3.1 validator, served by a real server; schemas that cannot be converted
// warn (naming the route) and still give a valid document; bad options throw clearly.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { App, silentLogger, type Logger } from '@tachyon/server';
import * as v from 'valibot';
import { z } from 'zod';
import { asyncapi, generateOpenApi, openapi } from '../src/index.ts';
import { assertValidOpenApi, shopApp } from './app.ts';

const info = { title: 'Shop', version: '1.0.0' };
const securitySchemes = { bearer: { type: 'http' as const, scheme: 'bearer', bearerFormat: 'JWT' } };
type Doc = Record<string, any>;

function recordingLogger(): Logger & { warnings: string[] } {
  const warnings: string[] = [];
  return { ...silentLogger, warn: (o: object | string, m?: string) => void warnings.push(typeof o === 'string' ? o : (m ?? '')), warnings };
}

test('a realistic app: paths, parameters, bodies, replies, components, security, tags', async () => {
  const doc: Doc = generateOpenApi(shopApp(), {
    info,
    securitySchemes,
    tags: [{ name: 'users', description: 'People' }],
    servers: [{ url: 'https://api.example.com' }],
  });
  await assertValidOpenApi(doc);
  assert.equal(doc.openapi, '3.1.0');
  assert.deepEqual(Object.keys(doc.paths), ['/echo', '/files/{wildcard}', '/health', '/users', '/users/{id}']);
  assert.equal(doc.paths['/internal'], undefined, 'hidden route left out');
  const one = doc.paths['/users/{id}'].get;
  assert.equal(one.operationId, 'getUser');
  assert.deepEqual(one.parameters, [
    { name: 'id', in: 'path', required: true, description: 'The user id.', schema: one.parameters[0].schema },
  ]);
  assert.equal(one.parameters[0].schema.type, 'integer');
  assert.deepEqual(one.responses['200'].content['application/json'].schema, { $ref: '#/components/schemas/User' });
  assert.deepEqual(one.responses['404'].content['application/json'].schema, { $ref: '#/components/schemas/NotFound' });
  assert.deepEqual(one.responses['400'], { $ref: '#/components/responses/ValidationFailed' });
  assert.equal(one.responses['413'], undefined, 'no body, no 413');
  // Query parameters from the query schema, with defaults and optionality.
  const list = doc.paths['/users'].get;
  assert.deepEqual(
    list.parameters.map((p: Doc) => [p.name, p.in, p.required]),
    [
      ['limit', 'query', false],
      ['q', 'query', false],
    ],
  );
  assert.equal(list.parameters[0].schema.default, 20);
  assert.deepEqual(list.responses['200'].content['application/json'].schema, {
    type: 'array',
    items: { $ref: '#/components/schemas/User' },
  });
  // The body: one media type per consumed kind, the 413 with the route's limit, the 415 with the types.
  const create = doc.paths['/users'].post;
  assert.deepEqual(Object.keys(create.requestBody.content), ['application/json', 'application/x-www-form-urlencoded']);
  assert.deepEqual(create.requestBody.content['application/json'].schema, { $ref: '#/components/schemas/NewUser' });
  assert.match(create.responses['413'].description, /over 4096 bytes/);
  assert.match(create.responses['415'].description, /application\/json or application\/x-www-form-urlencoded/);
  assert.deepEqual(create.security, [{ bearer: [] }]);
  assert.equal(create.summary, 'Create a user');
  assert.match(create.description, /Markdown/);
  assert.equal(create.operationId, 'postUsers');
  assert.ok(doc.paths['/users/{id}'].put.responses['4XX']);
  // Headers: authorization is the security scheme's business, not a parameter.
  const del = doc.paths['/users/{id}'].delete;
  assert.equal(del.deprecated, true);
  assert.deepEqual(
    del.parameters.map((p: Doc) => `${p.in}:${p.name}`),
    ['path:id', 'header:x-reason'],
  );
  // any(): the usual methods, one operation each, unique ids.
  assert.deepEqual(Object.keys(doc.paths['/echo']), ['get', 'post', 'put', 'patch', 'delete']);
  assert.deepEqual(Object.keys(doc.paths['/echo'].post.requestBody.content), ['text/plain', 'application/json']);
  // The wildcard is a documented path parameter.
  assert.match(doc.paths['/files/{wildcard}'].get.parameters[0].description, /rest of the path after `\/files\/`/);
  // Components: named schemas once, the framework's error bodies, the schemes.
  assert.deepEqual(Object.keys(doc.components.schemas).sort(), ['HttpError', 'NewUser', 'NotFound', 'User', 'ValidationError']);
  assert.deepEqual(doc.components.responses.ValidationFailed.content['application/json'].schema, {
    $ref: '#/components/schemas/ValidationError',
  });
  assert.deepEqual(doc.components.securitySchemes, securitySchemes);
  assert.deepEqual(doc.tags, [{ name: 'users', description: 'People' }]);
  assert.deepEqual(doc.servers, [{ url: 'https://api.example.com' }]);
  const ids = Object.values(doc.paths).flatMap((item: any) => Object.values(item).map((op: any) => op.operationId));
  assert.equal(new Set(ids).size, ids.length, 'operationIds are unique');
});

test('the framework answers as documented: a 400 body matches ValidationError, 415 and 413 are real', async () => {
  const app = shopApp();
  const bad = await app.request('/users', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ name: '' }),
  });
  assert.equal(bad.status, 400);
  const body = (await bad.json()) as Doc;
  assert.equal(typeof body.error, 'string');
  assert.ok(Array.isArray(body.issues) && body.issues.every((i: Doc) => Array.isArray(i.path) && typeof i.message === 'string'));
  const wrongType = await app.request('/users', { method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'x' });
  assert.equal(wrongType.status, 415);
  const big = await app.request('/users', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'x'.repeat(5000) }),
  });
  assert.equal(big.status, 413);
  await app.close();
});

test('a fixture of 200 routes gives a valid document; generation time is measured', async (t) => {
  const app = new App({ logger: silentLogger });
  const Item = z.object({ id: z.string(), price: z.number(), tags: z.array(z.string()) }).meta({ id: 'Item' });
  for (let i = 0; i < 50; i++) {
    const base = `/r${i}/items`;
    app.get(base, { query: z.object({ page: z.coerce.number().optional() }), response: { 200: z.array(Item) }, tags: [`r${i}`] }, () => []);
    app.get(
      `${base}/:id`,
      { params: z.object({ id: z.string() }), response: { 200: Item, 404: z.object({ error: z.string() }) } },
      (req) => ({ id: req.params.id, price: 1, tags: [] }),
    );
    app.post(base, { body: Item.omit({ id: true }), response: { 201: Item } }, (req) => ({ id: 'new', ...req.body }));
    app.delete(`${base}/:id`, { summary: `Delete from r${i}` }, () => null);
  }
  assert.equal(app.routes().length, 200);
  const runs: number[] = [];
  let doc: Doc = {};
  for (let i = 0; i < 5; i++) {
    const start = performance.now();
    doc = generateOpenApi(app, { info });
    runs.push(performance.now() - start);
  }
  const size = JSON.stringify(doc).length;
  t.diagnostic(`200 routes: generation ${runs.map((r) => r.toFixed(1)).join(', ')} ms (first, then warm); ${size} bytes of JSON`);
  assert.equal(Object.keys(doc.paths).length, 100);
  assert.equal(
    Object.values(doc.paths).reduce((n: number, item: any) => n + Object.keys(item).length, 0),
    200,
  );
  await assertValidOpenApi(doc);
});

test('a schema without a JSON Schema form: a warning naming the route, a permissive schema, a valid document', async () => {
  const logger = recordingLogger();
  const app = new App({ logger });
  const opaque = { '~standard': { version: 1 as const, vendor: 'acme', validate: (value: unknown) => ({ value }) } };
  app.post('/events', { body: z.object({ at: z.date() }) }, () => null);
  app.put('/opaque', { body: opaque }, () => null);
  app.post(
    '/valibot',
    { body: v.object({ email: v.pipe(v.string(), v.email()) }), response: { 200: v.object({ ok: v.boolean() }) } },
    () => ({ ok: true }),
  );
  const doc: Doc = generateOpenApi(app, { info });
  await assertValidOpenApi(doc);
  assert.equal(logger.warnings.length, 2, logger.warnings.join('\n'));
  assert.match(
    logger.warnings[0]!,
    /^POST \/events body: schema cannot be converted to JSON Schema \(.*Date.*\); documented as any value$/,
  );
  assert.match(logger.warnings[1]!, /^PUT \/opaque body: .*vendor \(acme\) offers no JSON Schema conversion/);
  assert.match(doc.paths['/events'].post.requestBody.content['application/json'].schema.description, /no JSON Schema form/);
  // valibot through @valibot/to-json-schema.
  assert.deepEqual(doc.paths['/valibot'].post.requestBody.content['application/json'].schema.properties.email, {
    type: 'string',
    format: 'email',
  });
  // onWarning takes the warnings instead of the logger.
  const seen: string[] = [];
  generateOpenApi(app, { info, onWarning: (m) => seen.push(m) });
  assert.equal(seen.length, 2);
  assert.equal(logger.warnings.length, 2);
});

test('served by a real server: generated once at the first request, cached, leaving out its own route', async () => {
  const app = shopApp();
  app.get('/spec.json', openapi(app, { info, securitySchemes }));
  const server = await app.listen(0, '127.0.0.1');
  try {
    const url = `http://127.0.0.1:${server.port}/spec.json`;
    const res = await fetch(url);
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-type'), 'application/json; charset=utf-8');
    const text = await res.text();
    const doc: Doc = JSON.parse(text);
    await assertValidOpenApi(doc);
    assert.deepEqual(Object.keys(doc.paths), ['/echo', '/files/{wildcard}', '/health', '/users', '/users/{id}']);
    assert.equal(await (await fetch(url)).text(), text, 'the same bytes again');
    assert.equal((await fetch(url, { method: 'HEAD' })).status, 200);
  } finally {
    await app.close();
  }
});

test('openapi.serve(): the document and the reference page, none of their routes in the document', async () => {
  const app = shopApp();
  openapi.serve(app, { info, securitySchemes, docs: '/docs/' });
  const server = await app.listen(0, '127.0.0.1');
  try {
    const base = `http://127.0.0.1:${server.port}`;
    // The page first: its routes and the document's are known from the start.
    const page = await fetch(`${base}/docs`);
    assert.equal(page.status, 200);
    assert.match(page.headers.get('content-type')!, /^text\/html/);
    assert.match(await page.text(), /<script src="\/docs\/swagger-ui-bundle\.js"><\/script>/);
    const init = await (await fetch(`${base}/docs/init.js`)).text();
    assert.match(init, /url: "\/openapi\.json"/);
    const bundle = await fetch(`${base}/docs/swagger-ui-bundle.js`);
    assert.equal(bundle.status, 200);
    assert.match(bundle.headers.get('content-type')!, /javascript/);
    assert.ok((await bundle.arrayBuffer()).byteLength > 500_000);
    const doc: Doc = await (await fetch(`${base}/openapi.json`)).json();
    await assertValidOpenApi(doc);
    assert.deepEqual(Object.keys(doc.paths), ['/echo', '/files/{wildcard}', '/health', '/users', '/users/{id}']);
  } finally {
    await app.close();
  }
  const other = shopApp();
  openapi.serve(other, { info, securitySchemes, path: '/api/spec.json' });
  const doc: Doc = await (await other.request('/api/spec.json')).json();
  assert.equal(doc.paths['/api/spec.json'], undefined);
  assert.equal((await other.request('/docs')).status, 404);
  await other.close();
});

test('openapi(app, { docs }): the handler for app.get() declares the reference page at once; a document served elsewhere than the page loads is logged', async () => {
  const entries: { msg?: string }[] = [];
  const logger: Logger = {
    ...silentLogger,
    warn: (obj: unknown, msg?: string) => void entries.push({ msg: typeof obj === 'string' ? obj : msg }),
    child: () => logger,
  } as Logger;
  const app = shopApp(logger);
  app.get('/openapi.json', openapi(app, { info, securitySchemes, docs: '/docs' }));
  const server = await app.listen(0, '127.0.0.1');
  try {
    const base = `http://127.0.0.1:${server.port}`;
    const page = await fetch(`${base}/docs`);
    assert.equal(page.status, 200);
    assert.match(await page.text(), /<script src="\/docs\/swagger-ui-bundle\.js"><\/script>/);
    assert.match(await (await fetch(`${base}/docs/init.js`)).text(), /url: "\/openapi\.json"/);
    const doc: Doc = await (await fetch(`${base}/openapi.json`)).json();
    await assertValidOpenApi(doc);
    assert.deepEqual(
      Object.keys(doc.paths),
      ['/echo', '/files/{wildcard}', '/health', '/users', '/users/{id}'],
      'neither the page nor the document listed',
    );
    assert.equal(entries.length, 0);
  } finally {
    await app.close();
  }
  const elsewhere = shopApp(logger);
  elsewhere.get('/spec.json', openapi(elsewhere, { info, securitySchemes, docs: '/docs' }));
  assert.equal((await elsewhere.request('/spec.json')).status, 200);
  assert.ok(
    entries.some((e) =>
      /the reference page at \/docs loads \/openapi\.json, but the document is served at \/spec\.json: pass \{ path: '\/spec\.json' \}/.test(
        e.msg ?? '',
      ),
    ),
    JSON.stringify(entries),
  );
  await elsewhere.close();
  const moved = shopApp(logger);
  moved.get('/spec.json', openapi(moved, { info, securitySchemes, docs: '/docs', path: '/spec.json' }));
  assert.match(await (await moved.request('/docs/init.js')).text(), /url: "\/spec\.json"/);
  await moved.close();
});

test('document routes are never listed: declared by serve() from the start, handlers once requested', async () => {
  const app = shopApp();
  asyncapi.serve(app, { info });
  app.get('/asyncapi-copy.json', asyncapi(app, { info }));
  app.get('/openapi.json', openapi(app, { info, securitySchemes }));
  const paths = async () => Object.keys(((await (await app.request('/openapi.json')).json()) as Doc).paths);
  const api = ['/echo', '/files/{wildcard}', '/health', '/users', '/users/{id}'];
  // The copy's handler has not been requested yet: its route is still an ordinary one.
  assert.deepEqual(await paths(), ['/asyncapi-copy.json', ...api]);
  assert.equal((await app.request('/asyncapi-copy.json')).status, 200);
  assert.deepEqual(await paths(), api, 'made again without it');
  assert.deepEqual(Object.keys(generateOpenApi(app, { info, securitySchemes }).paths), api);
  assert.throws(() => asyncapi.serve(app, { info, path: 'x' } as never), /asyncapi\.serve\(\): path must be a literal path/);
  assert.throws(
    () => asyncapi.serve(app, { info, pth: '/x' } as never),
    /asyncapi\.serve\(\): unknown option "pth" \(did you mean "path"\?\)/,
  );
  await app.close();
});

test('route security must name declared schemes; duplicate operationIds are refused', () => {
  const app = new App({ logger: silentLogger });
  app.get('/a', { security: [{ apiKey: [] }] }, () => null);
  assert.throws(
    () => generateOpenApi(app, { info }),
    /GET \/a: the route security names the security scheme "apiKey", which is not declared in securitySchemes/,
  );
  const twice = new App({ logger: silentLogger });
  twice.get('/a', { operationId: 'same' }, () => null);
  twice.get('/b', { operationId: 'same' }, () => null);
  assert.throws(() => generateOpenApi(twice, { info }), /operationId "same" of GET \/b is already used by GET \/a/);
  // A generated id never takes a declared one, whatever the order.
  const mixed = new App({ logger: silentLogger });
  mixed.get('/users', () => null);
  mixed.post('/other', { operationId: 'getUsers' }, () => null);
  const doc: Doc = generateOpenApi(mixed, { info });
  assert.equal(doc.paths['/other'].post.operationId, 'getUsers');
  assert.equal(doc.paths['/users'].get.operationId, 'getUsers2');
});

test('bad options throw at openapi() with a message naming the option', () => {
  const app = new App({ logger: silentLogger });
  const bad: [unknown, RegExp][] = [
    [undefined, /^TypeError: openapi\(\): options must be an object/],
    [{}, /info must be an object/],
    [{ info: { title: 'x' } }, /info\.version must be a non-empty string/],
    [{ info: { title: '', version: '1' } }, /info\.title must be a non-empty string/],
    [{ info: { title: 'x', version: '1', tittle: 'y' } }, /openapi\(\): info: unknown option "tittle" \(did you mean "title"\?\)/],
    [{ info, server: [] }, /unknown option "server" \(did you mean "servers"\?\)/],
    [{ info, servers: 'https://x' }, /servers must be an array/],
    [{ info, securitySchemes: { bearer: { scheme: 'bearer' } } }, /securitySchemes\.bearer must be a security scheme object with a type/],
    [{ info, security: [{ bearer: [] }] }, /security names the security scheme "bearer", which is not declared/],
    [{ info, docs: 'docs' }, /^TypeError: openapi\(\): docs must be a literal path starting with "\/"/],
    [{ info, path: '/spec.json' }, /^TypeError: openapi\(\): path: only the reference page uses it/],
    [{ info, tags: ['users'] }, /tags must be an array of \{ name, description\? \}/],
    [{ info, onWarning: 'log' }, /onWarning must be a function/],
  ];
  for (const [options, message] of bad) assert.throws(() => openapi(app, options as never), message, JSON.stringify(options));
  const badServe: [unknown, RegExp][] = [
    [{ info, docs: 'docs' }, /^TypeError: openapi\.serve\(\): docs must be a literal path starting with "\/"/],
    [{ info, docs: '/docs/:x' }, /docs must be a literal path/],
    [{ info, path: 'openapi.json' }, /openapi\.serve\(\): path must be a literal path/],
    [{ info, doc: '/docs' }, /openapi\.serve\(\): unknown option "doc" \(did you mean "docs"\?\)/],
  ];
  for (const [options, message] of badServe) assert.throws(() => openapi.serve(app, options as never), message, JSON.stringify(options));
  assert.equal(app.routes().length, 0, 'nothing declared by a refused call');
  assert.throws(() => generateOpenApi({} as never, { info }), /expected an App \(with routes\(\)\) or the array app\.routes\(\) returns/);
});

test('generateOpenApi takes the route table too (for build scripts)', async () => {
  const routes = shopApp().routes();
  const doc: Doc = generateOpenApi(routes, { info, securitySchemes });
  await assertValidOpenApi(doc);
  assert.ok(doc.paths['/users/{id}'].get);
});
