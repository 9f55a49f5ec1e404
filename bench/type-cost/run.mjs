#!/usr/bin/env node
// Type-checker cost of the typed clients (issue 24: "an app of 200 routes and 50 events
// type-checks in under 2 s more than without the clients"). Generates an app of 200 typed
// routes (10 routers of 20 chained routes, each with params, query or body and response
// schemas, attached under prefixes), 5 typed topics and a ws route of 50 events (data schemas,
// every other one a reply schema), then type-checks it three ways with `tsc
// --extendedDiagnostics`: declared as statements (nothing accumulates), chained, and chained
// with `client<typeof app>` (one call per route) and `connect<WsContract<typeof app, '/live'>>`
// (one request per event, one subscription per topic). Prints the reports' key lines.
// Run after `npm run build` (it compiles against the built declarations):
//   node bench/type-cost/run.mjs [routes=200] [events=50]
import { execFileSync } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const ROUTES = Number(process.argv[2] ?? 200);
const EVENTS = Number(process.argv[3] ?? 50);
const TOPICS = 5;
const PER_ROUTER = 20;
const dir = fileURLToPath(new URL('./gen/', import.meta.url));
rmSync(dir, { recursive: true, force: true });
mkdirSync(dir, { recursive: true });

const routers = [];
const statements = [];
for (let r = 0; r * PER_ROUTER < ROUTES; r++) {
  const lines = [`export const router${r} = new Router()`];
  for (let i = r * PER_ROUTER; i < Math.min(ROUTES, (r + 1) * PER_ROUTER); i++) {
    const kind = i % 4;
    if (kind === 0)
      lines.push(
        `  .get('/things${i}/:id', { params: z.object({ id: z.coerce.number() }), query: z.object({ q: z.string().optional() }), response: { 200: Thing, 404: Problem } }, (req) => ({ id: req.params.id, name: 'n${i}', tags: [] }))`,
      );
    else if (kind === 1)
      lines.push(
        `  .post('/things${i}', { body: z.object({ name: z.string(), n: z.number() }), response: { 201: Thing, '4XX': Problem } }, (req, res) => { res.status(201); return { id: req.body.n, name: req.body.name, tags: [] }; })`,
      );
    else if (kind === 2)
      lines.push(
        `  .put('/things${i}/:id/:part', { body: z.object({ tags: z.array(z.string()) }), response: { 200: z.array(Thing) } }, (req) => req.body.tags.map((t, n) => ({ id: n, name: t + req.params.part, tags: [] })))`,
      );
    else lines.push(`  .delete('/things${i}/:id', (req) => req.params.id)`);
  }
  routers.push(`${lines.join('\n')};`);
  // The same routes declared one statement each: nothing accumulates (the cost before typed routes).
  statements.push([`export const router${r} = new Router();`, ...lines.slice(1).map((l) => `router${r}${l.trimStart()};`)].join('\n'));
}
// The realtime side: typed topics, then one ws route with EVENTS events.
const topicLines = [];
for (let t = 0; t < TOPICS; t++)
  topicLines.push(
    `  .topic('t${t}:*', { events: { moved: z.object({ x: z.number(), y: z.number() }), said${t}: z.object({ text: z.string() }), left: z.undefined() } })`,
  );
const eventLines = [];
for (let e = 0; e < EVENTS; e++) {
  const reply =
    e % 2 === 0
      ? `reply: z.object({ ok: z.boolean(), n: z.number() }), handler: (ws, d) => ({ ok: d.text.length > 0, n: ${e} })`
      : 'handler: (ws, d) => d.n';
  const schema = e % 2 === 0 ? 'z.object({ room: z.string(), text: z.string() })' : 'z.object({ n: z.number() })';
  eventLines.push(`    'ev${e}': { schema: ${schema}, ${reply} },`);
}
const wsRoute = `.ws('/live', {\n  upgrade: () => ({ user: 'u' }),\n  events: {\n${eventLines.join('\n')}\n  },\n})`;

const prelude = `import { App, Router } from '@tachyon/server';
import { z } from 'zod';
const Thing = z.object({ id: z.number(), name: z.string(), tags: z.array(z.string()) });
const Problem = z.object({ error: z.string() });
`;
const appFile = `${prelude}
${routers.join('\n\n')}

export const app = new App()
${routers.map((_, r) => `  .attach('/r${r}', router${r})`).join('\n')}
${topicLines.join('\n')}
  ${wsRoute};
`;
writeFileSync(`${dir}app.ts`, appFile);
writeFileSync(
  `${dir}statements.ts`,
  `${prelude}\n${statements.join('\n\n')}\n\nexport const app = new App();\n${routers.map((_, r) => `app.attach('/r${r}', router${r});`).join('\n')}\n${topicLines.map((l) => `app${l.trimStart()};`).join('\n')}\napp${wsRoute};\n`,
);

const calls = [];
for (let i = 0; i < ROUTES; i++) {
  const r = Math.floor(i / PER_ROUTER);
  const kind = i % 4;
  if (kind === 0)
    calls.push(
      `{ const x = await api.get('/r${r}/things${i}/:id', { params: { id: ${i} }, query: { q: 'a' } }); if (x.ok) x.data.name.toUpperCase(); }`,
    );
  else if (kind === 1)
    calls.push(`{ const x = await api.post('/r${r}/things${i}', { body: { name: 'a', n: 1 } }); if (x.ok) x.data.id.toFixed(); }`);
  else if (kind === 2)
    calls.push(
      `{ const x = await api.put('/r${r}/things${i}/:id/:part', { params: { id: 1, part: 'p' }, body: { tags: ['t'] } }); if (x.ok) x.data.length; }`,
    );
  else calls.push(`await api.delete('/r${r}/things${i}/:id', { params: { id: 1 } });`);
}
for (let e = 0; e < EVENTS; e++)
  calls.push(
    e % 2 === 0
      ? `{ const x = await live.request('ev${e}', { room: 'r', text: 't' }); x.ok; }`
      : `{ const x = await live.request('ev${e}', { n: ${e} }); }`,
  );
for (let t = 0; t < TOPICS; t++)
  calls.push(`live.on(\`t${t}:\${'x'}\`, 'moved', (p) => p.x + p.y); live.subscribe('t${t}:1', (e, d) => e === 'said${t}' && d.text);`);
writeFileSync(
  `${dir}client.ts`,
  `import { client } from '@tachyon/client/http';
import { connect, type WsContract } from '@tachyon/client';
import type { app } from './app.ts';
const api = client<typeof app>('http://localhost:3000');
const live = connect<WsContract<typeof app, '/live'>>('ws://localhost:3000/live');
${calls.join('\n')}
`,
);
const tsconfig = (files) =>
  JSON.stringify({
    extends: '../../../tsconfig.base.json',
    compilerOptions: { noEmit: true, declaration: false, sourceMap: false, inlineSources: false, incremental: false },
    files,
  });
writeFileSync(`${dir}tsconfig.statements.json`, tsconfig(['statements.ts']));
writeFileSync(`${dir}tsconfig.app.json`, tsconfig(['app.ts']));
writeFileSync(`${dir}tsconfig.client.json`, tsconfig(['app.ts', 'client.ts']));

const tsc = fileURLToPath(new URL('../../node_modules/typescript/bin/tsc', import.meta.url));
const pick = /^(Files|Types|Instantiations|Memory used|Check time|Total time):/;
const titles = {
  statements: `the same routes declared as statements (nothing accumulates)`,
  app: `app alone (${ROUTES} chained routes, ${EVENTS} events)`,
  client: `app + client<typeof app> + ${ROUTES} calls + connect<WsContract> + ${EVENTS} requests`,
};
for (const which of ['statements', 'app', 'client']) {
  const out = execFileSync(process.execPath, [tsc, '-p', `${dir}tsconfig.${which}.json`, '--extendedDiagnostics'], { encoding: 'utf8' });
  console.log(`--- ${titles[which]}`);
  for (const line of out.split('\n')) if (pick.test(line)) console.log(line);
}
