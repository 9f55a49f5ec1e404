// The consumer test: the packages as users receive them. Packs every package, installs the
// tarballs with plain `npm install` into a temporary app outside the repository, type-checks
// the app under NodeNext, starts it, and exercises HTTP, validation, a WebSocket event with a
// reply through @tachyon/client from Node, and app.client(). Needs the npm registry (zod,
// typescript, uWebSockets.js); `npm test` builds the packages before it runs.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import http from 'node:http';
import { dirname, join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const PACKAGES = [
  'packages/server',
  'packages/client',
  'packages/redis',
  'packages/nats',
  'packages/sveltekit',
  'packages/openapi',
  'packages/otel',
];
// A third party's plugin, built and packed as its author would publish it (its prepack builds it).
const PLUGIN = 'examples/api-key-auth';
const work = mkdtempSync(join(tmpdir(), 'tachyon-consumer-'));
const app = join(work, 'app');
const node = process.execPath;

function sh(cmd, args, cwd, timeout = 180_000) {
  const t0 = Date.now();
  const r = spawnSync(cmd, args, { cwd, encoding: 'utf8', timeout, env: { ...process.env, npm_config_update_notifier: 'false' } });
  const took = ((Date.now() - t0) / 1000).toFixed(1);
  assert.equal(r.status, 0, `${cmd} ${args.join(' ')} failed (${took} s):\n${r.stdout}\n${r.stderr}${r.error ? `\n${r.error}` : ''}`);
  return { stdout: r.stdout, took };
}

const SERVER = `import { App, HttpError } from '@tachyon/server';
import { z } from 'zod';

const User = z.object({ name: z.string().min(1), age: z.number().int().min(0) });

const app = new App();
app.client();
app.get('/hello/:name', { params: z.object({ name: z.string() }) }, (req) => ({ hello: req.params.name }));
app.post('/users', { body: User }, (req, res) => {
  const user: { name: string; age: number } = req.body;
  res.status(201);
  return { created: user.name };
});
app.get('/teapot', () => {
  throw new HttpError(418, 'short and stout');
});
app.ws('/live', {
  events: {
    add: {
      schema: z.object({ a: z.number(), b: z.number() }),
      handler: (_ws, { a, b }) => ({ sum: a + b }),
    },
  },
});
const server = await app.listen({ port: 0, host: '127.0.0.1' });
console.log('PORT ' + server.port);
process.on('SIGTERM', () => void server.close().then(() => process.exit(0)));
`;

const CLUSTER = `import { App, cluster } from '@tachyon/server';

const server = await cluster({ workers: 2, port: 0, host: '127.0.0.1' }, () => {
  const app = new App();
  app.get('/who', () => ({ worker: app.worker }));
  return app;
});
console.log('PORT ' + server.port + ' ' + server.workers);
`;

const CLIENT = `import { connect } from '@tachyon/client';

type Requests = { add: { data: { a: number; b: number }; reply: { sum: number } } };
const live = connect<{}, Requests>(process.argv[2]!);
await live.ready;
const { sum } = await live.request('add', { a: 40, b: 2 });
console.log(JSON.stringify({ sum }));
live.close();
`;

// The buses as a user wires them; the brokers are unreachable on purpose: the app must start
// and serve anyway (broker retries go on in the background), then close cleanly.
const BUSES = `import { App } from '@tachyon/server';
import { redisBus, type RedisBusOptions } from '@tachyon/redis';
import { natsBus } from '@tachyon/nats';

const options: RedisBusOptions = { url: 'redis://127.0.0.1:1', sharded: false };
for (const bus of [redisBus(options), natsBus({ servers: 'nats://127.0.0.1:1' })]) {
  const app = new App({ bus });
  app.get('/', () => ({ ready: bus.ready() }));
  const server = await app.listen({ port: 0, host: '127.0.0.1' });
  const body: { ready: boolean } = await (await fetch('http://127.0.0.1:' + server.port + '/')).json();
  console.log(JSON.stringify(body));
  await server.close();
}
`;

// @tachyon/openapi as a user wires it: the documents and the reference page (Swagger UI from
// the installed swagger-ui-dist, served from memory).
const OPENAPI = `import { App } from '@tachyon/server';
import { asyncapi, openapi, type OpenApiDocument } from '@tachyon/openapi';
import { z } from 'zod';

const app = new App();
app.get('/users/:id', { params: z.object({ id: z.coerce.number() }), response: { 200: z.object({ name: z.string() }) } }, () => ({ name: 'Ada' }));
app.ws('/live', { events: { add: { schema: z.object({ a: z.number() }), handler: () => 1 } } });
openapi.serve(app, { info: { title: 'Consumer', version: '1.0.0' }, docs: '/docs' });
asyncapi.serve(app, { info: { title: 'Consumer', version: '1.0.0' } });
const doc = (await (await app.request('/openapi.json')).json()) as OpenApiDocument;
const events = (await (await app.request('/asyncapi.json')).json()) as { asyncapi: string };
const page = await app.request('/docs/swagger-ui-bundle.js');
console.log(JSON.stringify({ openapi: doc.openapi, paths: Object.keys(doc.paths), asyncapi: events.asyncapi, bundle: page.status }));
await app.close();
`;

// The example third-party plugin from its tarball: registered, its decoration typed on every
// request (req.apiKey, through the plugin's module augmentation), its preHandler answering 401.
const PLUGIN_APP = `import { App } from '@tachyon/server';
import { apiKeyAuth, requireScope, type ApiKey } from 'tachyon-api-key-auth';

const app = new App();
await app.register(apiKeyAuth({ keys: { 'k-1': { name: 'ci', scopes: ['read'] } }, public: ['/healthz'] }));
app.get('/healthz', () => 'ok');
app.get('/me', (req) => {
  const key: ApiKey | null = req.apiKey;
  return { name: key?.name ?? null };
});
app.post('/admin', { hooks: { preHandler: [requireScope('write')] } }, () => 'written');
const statuses: (number | string)[] = [];
for (const [path, method, headers] of [['/healthz', 'GET', {}], ['/me', 'GET', {}], ['/me', 'GET', { 'x-api-key': 'k-1' }], ['/admin', 'POST', { 'x-api-key': 'k-1' }]] as const) {
  const res = await app.request(path, { method, headers });
  statuses.push(res.status, path === '/me' && res.ok ? ((await res.json()) as { name: string }).name : '');
}
await app.close();
console.log(JSON.stringify(statuses));
`;

// @tachyon/otel from its tarball with @opentelemetry/api (its peer) and no SDK: the plugin
// registers, installs nothing (no tracer provider), req.otel is typed, the app serves.
const OTEL_APP = `import { App, jsonLogger } from '@tachyon/server';
import { otel, withTraceIds, traceLogFields, type RequestTrace } from '@tachyon/otel';

const app = new App({ logger: withTraceIds(jsonLogger('error')) });
await app.register(otel({ ignore: (req) => req.path === '/healthz' }));
app.get('/', (req) => {
  const t: RequestTrace | null | undefined = req.otel;
  return { decorated: 'otel' in req, traced: t != null, fields: traceLogFields() };
});
const res = await app.request('/');
console.log(JSON.stringify(await res.json()));
await app.close();
`;

// @tachyon/sveltekit as a user's svelte.config.js and pages see it: the adapter (typed as a
// SvelteKit Adapter would be), event.platform's type, and the client's reactive topics
// (which import svelte/reactivity: svelte is installed, as in any SvelteKit app).
const SVELTEKIT = `import adapter, { tachyon, type AdapterOptions, type Platform } from '@tachyon/sveltekit';
import { connection, topic, type Status } from '@tachyon/sveltekit/client';

const options: AdapterOptions = { out: 'build', precompress: false, websocket: { path: '/ws' } };
const built = adapter(options);
const publish: Platform['publish'] = (_topic, _event, _data) => true;
const status: Status = connection().status;
const news = topic<{ title: string }>('news');
const title: string | undefined = news.data?.title;
console.log(JSON.stringify({ name: built.name, plugins: built.vite.plugins.length, plugin: typeof tachyon, publish: publish('t', 'e'), status, topic: news.name, title: title ?? null }));
`;

const TSCONFIG = {
  compilerOptions: {
    target: 'ES2023',
    module: 'NodeNext',
    moduleResolution: 'NodeNext',
    strict: true,
    noEmit: true,
    allowImportingTsExtensions: true,
    erasableSyntaxOnly: true,
    verbatimModuleSyntax: true,
    skipLibCheck: false,
    types: ['node'],
  },
  include: ['*.ts'],
};

describe('consumer: the packed packages in an app outside the repository', { timeout: 300_000 }, () => {
  let server;
  let port;

  before(async () => {
    mkdirSync(app, { recursive: true });
    const tarballs = [];
    for (const pkg of PACKAGES) {
      const out = sh('npm', ['pack', '--json', '--pack-destination', work], join(ROOT, pkg)).stdout;
      tarballs.push(join(work, JSON.parse(out)[0].filename));
    }
    const pluginPack = sh('npm', ['pack', '--json', '--pack-destination', work], join(ROOT, PLUGIN)).stdout;
    tarballs.push(join(work, JSON.parse(pluginPack.slice(pluginPack.indexOf('[')))[0].filename));
    writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'consumer-app', private: true, type: 'module' }, null, 2));
    writeFileSync(join(app, 'server.ts'), SERVER);
    writeFileSync(join(app, 'client.ts'), CLIENT);
    writeFileSync(join(app, 'cluster.ts'), CLUSTER);
    writeFileSync(join(app, 'buses.ts'), BUSES);
    writeFileSync(join(app, 'sveltekit.ts'), SVELTEKIT);
    writeFileSync(join(app, 'plugin.ts'), PLUGIN_APP);
    writeFileSync(join(app, 'openapi.ts'), OPENAPI);
    writeFileSync(join(app, 'otel.ts'), OTEL_APP);
    writeFileSync(join(app, 'tsconfig.json'), JSON.stringify(TSCONFIG, null, 2));
    const rootPkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
    const devTypes = `@types/node@${rootPkg.devDependencies['@types/node']}`;
    const ts = `typescript@${rootPkg.devDependencies.typescript}`;
    const svelte = `svelte@${rootPkg.devDependencies.svelte}`;
    const otelPkg = JSON.parse(readFileSync(join(ROOT, 'packages/otel/package.json'), 'utf8'));
    const otelApi = `@opentelemetry/api@${otelPkg.devDependencies['@opentelemetry/api']}`;
    const { took } = sh(
      'npm',
      ['install', '--no-audit', '--no-fund', '--prefer-offline', ...tarballs, 'zod', ts, devTypes, svelte, otelApi],
      app,
      240_000,
    );
    console.log(`# consumer: npm install of the tarballs took ${took} s`);
  });

  after(async () => {
    server?.kill('SIGKILL');
    rmSync(work, { recursive: true, force: true });
  });

  test('installs as a user gets it: no workspace links, README and LICENSE shipped', () => {
    for (const name of ['server', 'client', 'redis', 'nats', 'sveltekit', 'openapi', 'otel']) {
      const dir = join(app, 'node_modules', '@tachyon', name);
      assert.ok(lstatSync(dir).isDirectory() && !lstatSync(dir).isSymbolicLink(), `${name}: installed from its tarball`);
      assert.ok(!JSON.stringify(JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')).dependencies ?? {}).includes('workspace:'));
      assert.ok(existsSync(join(dir, 'README.md')) && existsSync(join(dir, 'LICENSE')), `${name}: README and LICENSE`);
      for (const f of readdirSync(join(dir, 'dist')).filter((f) => f.endsWith('.js.map'))) {
        const map = JSON.parse(readFileSync(join(dir, 'dist', f), 'utf8'));
        assert.equal(map.sourcesContent?.length, map.sources.length, `${name}/dist/${f} carries its sources`);
      }
    }
  });

  test('type-checks under NodeNext with strict settings', () => {
    sh(node, [join(app, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', app], app);
  });

  test('a third-party plugin from its tarball: registered, its decoration typed, its hooks answering', () => {
    const dir = join(app, 'node_modules', 'tachyon-api-key-auth');
    assert.ok(
      !lstatSync(dir).isSymbolicLink() && existsSync(join(dir, 'dist', 'index.d.ts')),
      'installed from its tarball, with its declarations',
    );
    const { stdout } = sh(node, ['plugin.ts'], app, 20_000);
    assert.deepEqual(JSON.parse(stdout.trim().split('\n').at(-1)), [200, '', 401, '', 200, 'ci', 403, '']);
  });

  test('@tachyon/openapi from its tarball: the documents and the reference page', () => {
    const { stdout } = sh(node, ['openapi.ts'], app, 20_000);
    assert.deepEqual(JSON.parse(stdout.trim().split('\n').at(-1)), {
      openapi: '3.1.0',
      paths: ['/users/{id}'],
      asyncapi: '3.0.0',
      bundle: 200,
    });
  });

  test('@tachyon/otel from its tarball, without an SDK: registered, nothing installed, the app serves', () => {
    const { stdout } = sh(node, ['otel.ts'], app, 20_000);
    assert.deepEqual(JSON.parse(stdout.trim().split('\n').at(-1)), { decorated: false, traced: false, fields: {} });
  });

  test('@tachyon/sveltekit and @tachyon/sveltekit/client import from their tarball', () => {
    const { stdout } = sh(node, ['sveltekit.ts'], app, 20_000);
    assert.deepEqual(JSON.parse(stdout.trim()), {
      name: '@tachyon/sveltekit',
      plugins: 1,
      plugin: 'function',
      publish: true,
      status: 'closed', // on the server a connection is inert
      topic: 'news',
      title: null,
    });
  });

  test('starts (.ts on Node directly) and answers HTTP, validation and errors', async () => {
    server = spawn(node, ['server.ts'], { cwd: app, stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    server.stderr.on('data', (d) => (stderr += d));
    port = await new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no PORT line within 20 s; stderr:\n${stderr}`)), 20_000);
      server.stdout.on('data', (d) => {
        const m = /PORT (\d+)/.exec(String(d));
        if (m) {
          clearTimeout(timer);
          resolve(Number(m[1]));
        }
      });
      server.on('exit', (code) => reject(new Error(`server exited with ${code}:\n${stderr}`)));
    });
    const base = `http://127.0.0.1:${port}`;
    assert.deepEqual(await (await fetch(`${base}/hello/ada`)).json(), { hello: 'ada' });
    const created = await fetch(`${base}/users`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Ada', age: 36 }),
    });
    assert.equal(created.status, 201);
    assert.deepEqual(await created.json(), { created: 'Ada' });
    const invalid = await fetch(`${base}/users`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name: '', age: -1 }),
    });
    assert.equal(invalid.status, 400);
    const problem = await invalid.json();
    assert.ok(Array.isArray(problem.issues) && problem.issues.length === 2, JSON.stringify(problem));
    assert.equal((await fetch(`${base}/teapot`)).status, 418);
    assert.equal((await fetch(`${base}/nope`)).status, 404);
  });

  test('a WebSocket event with a reply, through @tachyon/client from Node', () => {
    const { stdout } = sh(node, ['client.ts', `ws://127.0.0.1:${port}/live`], app, 20_000);
    assert.deepEqual(JSON.parse(stdout.trim()), { sum: 42 });
  });

  test('@tachyon/redis and @tachyon/nats: an app starts and serves while its broker is unreachable, and closes', () => {
    const { stdout } = sh(node, ['buses.ts'], app, 30_000);
    assert.deepEqual(
      stdout
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l)),
      [{ ready: false }, { ready: false }],
    );
  });

  test('app.client() serves the browser build', async () => {
    const res = await fetch(`http://127.0.0.1:${port}/tachyon/client.js`);
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type'), /javascript/);
    assert.match(await res.text(), /export\{/);
  });

  test('cluster(): the packed server on 2 worker threads, one port, stopped by SIGTERM', async () => {
    const proc = spawn(node, ['cluster.ts'], { cwd: app, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    const exited = new Promise((resolve) => proc.once('exit', (code, signal) => resolve({ code, signal })));
    try {
      const clusterPort = await new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no PORT line within 20 s:\n${output}`)), 20_000);
        const onData = (d) => {
          output += d;
          const m = /PORT (\d+) 2/.exec(output);
          if (m) {
            clearTimeout(timer);
            resolve(Number(m[1]));
          }
        };
        proc.stdout.on('data', onData);
        proc.stderr.on('data', onData);
        void exited.then(() => reject(new Error(`exited:\n${output}`)));
      });
      const workers = new Set();
      for (let i = 0; i < 6; i++) {
        // A new connection each time (the acceptor deals connections round-robin).
        const body = await new Promise((resolve, reject) => {
          http
            .get({ host: '127.0.0.1', port: clusterPort, path: '/who', agent: false }, (res) => {
              let text = '';
              res.on('data', (d) => (text += d)).on('end', () => resolve(text));
            })
            .on('error', reject);
        });
        workers.add(JSON.parse(body).worker);
      }
      assert.deepEqual([...workers].sort(), [1, 2]);
    } finally {
      proc.kill('SIGTERM');
      const kill = setTimeout(() => proc.kill('SIGKILL'), 15_000);
      assert.deepEqual(await exited, { code: null, signal: 'SIGTERM' }, output);
      clearTimeout(kill);
    }
  });

  test('without @tachyon/client installed, app.client() says what to install', () => {
    // The optional peer is missing: the error must name the fix, not a module-resolution trace.
    const installed = join(app, 'node_modules', '@tachyon', 'client');
    const aside = join(work, 'client-aside');
    writeFileSync(join(app, 'no-client.mjs'), "import { App } from '@tachyon/server';\nnew App().client();\n");
    renameSync(installed, aside);
    try {
      const r = spawnSync(node, ['no-client.mjs'], { cwd: app, encoding: 'utf8', timeout: 20_000 });
      assert.notEqual(r.status, 0, 'app.client() threw');
      assert.match(r.stderr, /@tachyon\/client is not installed: npm install @tachyon\/client/);
    } finally {
      renameSync(aside, installed);
    }
  });

  test('on glibc < 2.38 the addon was made loadable in node_modules/.cache, the package untouched', (t) => {
    const glibc = process.report.getReport().header.glibcVersionRuntime;
    if (!glibc || Number(glibc.split('.')[1]) >= 38) return t.skip(`glibc ${glibc ?? 'n/a'}: the shipped binary loads as is`);
    const cache = join(app, 'node_modules', '.cache', 'tachyon-uws');
    assert.ok(
      existsSync(cache) && readdirSync(cache).some((f) => f.endsWith('.node')),
      'a compatible copy in node_modules/.cache/tachyon-uws',
    );
    assert.ok(
      !readdirSync(join(app, 'node_modules', 'uWebSockets.js')).some((f) => f.endsWith('.orig')),
      'the installed package is not patched in place',
    );
  });
});
