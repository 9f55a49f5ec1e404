#!/usr/bin/env node
// Type-checker cost of the typed HTTP client (issue 24: "an app of 200 routes type-checks in
// under 2 s more than without the clients"). Generates an app of 200 typed routes (10 routers
// of 20 chained routes, each with params, query or body and response schemas, attached under
// prefixes), then type-checks it twice with `tsc --extendedDiagnostics`: the app alone, and
// the app with `client<typeof app>` and one call per route. Prints both reports' key lines.
// Run after `npm run build` (it compiles against the built declarations):
//   node bench/type-cost/run.mjs [routes=200]
import { execFileSync } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const ROUTES = Number(process.argv[2] ?? 200);
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
const prelude = `import { App, Router } from '@tachyon/server';
import { z } from 'zod';
const Thing = z.object({ id: z.number(), name: z.string(), tags: z.array(z.string()) });
const Problem = z.object({ error: z.string() });
`;
const appFile = `${prelude}
${routers.join('\n\n')}

export const app = new App()
${routers.map((_, r) => `  .attach('/r${r}', router${r})`).join('\n')};
`;
writeFileSync(`${dir}app.ts`, appFile);
writeFileSync(
  `${dir}statements.ts`,
  `${prelude}\n${statements.join('\n\n')}\n\nexport const app = new App();\n${routers.map((_, r) => `app.attach('/r${r}', router${r});`).join('\n')}\n`,
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
writeFileSync(
  `${dir}client.ts`,
  `import { client } from '@tachyon/client/http';
import type { app } from './app.ts';
const api = client<typeof app>('http://localhost:3000');
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
  app: `app alone (${ROUTES} chained routes)`,
  client: `app + client<typeof app> + ${ROUTES} calls`,
};
for (const which of ['statements', 'app', 'client']) {
  const out = execFileSync(process.execPath, [tsc, '-p', `${dir}tsconfig.${which}.json`, '--extendedDiagnostics'], { encoding: 'utf8' });
  console.log(`--- ${titles[which]}`);
  for (const line of out.split('\n')) if (pick.test(line)) console.log(line);
}
