#!/usr/bin/env node
// Does a compiled serializer beat JSON.stringify? Issue 24 asked for `serialize: 'compiled'`
// (a route's response schema compiled to a stringify function, as Fastify does with
// fast-json-stringify) "only where it wins". This measures the candidate — Fastify's own
// fast-json-stringify, fed the JSON Schema Zod writes for the reply — against JSON.stringify
// on the replies of the benchmark scenarios and two larger shapes.
//
//   node bench/serializer.mjs            (bench/node_modules: fastify brings fast-json-stringify)
//
// CPU time of the loop (process.cpuUsage), not wall time, so another process taking the core
// for a while does not count; median of 7 rounds; ns per reply, building the value included
// (both sides build it the same way, as a handler would).
import { createRequire } from 'node:module';
import { z } from 'zod';
import { createdBody, userBody } from './servers/shared.mjs';

const require = createRequire(import.meta.url);
const fastJson = require('fast-json-stringify');

const User = z.object({
  id: z.number(),
  fields: z.array(z.string()),
  name: z.string(),
  email: z.string(),
  roles: z.array(z.string()),
  active: z.boolean(),
  createdAt: z.string(),
  bio: z.string(),
});
const Created = z.object({
  id: z.number(),
  name: z.string(),
  email: z.string(),
  age: z.number(),
  roles: z.array(z.string()),
  tagCount: z.number(),
});
const Order = z.object({
  id: z.string(),
  total: z.number(),
  lines: z.array(z.object({ sku: z.string(), qty: z.number().int(), price: z.number(), note: z.string().optional() })),
  customer: z.object({ id: z.number(), name: z.string(), tier: z.enum(['free', 'pro']) }),
  paid: z.boolean(),
});

const order = (i) => ({
  id: `ord_${i}`,
  total: 123.45,
  lines: Array.from({ length: 10 }, (_, k) => ({ sku: `SKU-${k}`, qty: k + 1, price: 9.99, note: k % 3 ? undefined : 'gift' })),
  customer: { id: i, name: 'Ada Lovelace', tier: 'pro' },
  paid: true,
});

const cases = {
  'GET /users/:id reply (http-realistic-get, ~230 B)': [User, (i) => userBody(i, 'a,b')],
  'POST /users 201 reply (http-realistic-post)': [
    Created,
    (i) => createdBody({ name: 'Ada', email: 'ada@example.com', age: i & 127, roles: ['reader'], tags: ['a', 'b'] }),
  ],
  'a list of 50 users (~11 KB)': [z.array(User), (i) => Array.from({ length: 50 }, (_, k) => userBody(i + k, 'a'))],
  'an order with 10 nested lines': [Order, order],
};

function cpuNs(fn, n) {
  const t0 = process.cpuUsage();
  let sink = 0;
  for (let i = 0; i < n; i++) sink += fn(i).length;
  const t = process.cpuUsage(t0);
  if (sink === 0) throw new Error('nothing serialized');
  return ((t.user + t.system) * 1000) / n;
}

const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];

console.log(`node ${process.version}, fast-json-stringify ${require('fast-json-stringify/package.json').version}\n`);
console.log('| reply | JSON.stringify ns | compiled ns | compiled ÷ JSON.stringify |');
console.log('|---|---:|---:|---:|');
for (const [name, [schema, make]] of Object.entries(cases)) {
  const compiled = fastJson(z.toJSONSchema(schema, { io: 'output', target: 'draft-7' }));
  const plain = (i) => JSON.stringify(make(i));
  const fast = (i) => compiled(make(i));
  // Same output first: a faster serializer that writes something else is not a candidate.
  const a = JSON.parse(plain(7));
  const b = JSON.parse(fast(7));
  if (JSON.stringify(a) !== JSON.stringify(b)) throw new Error(`${name}: outputs differ\n${plain(7)}\n${fast(7)}`);
  const n = Math.max(2000, Math.round(4e8 / plain(1).length / 100));
  cpuNs(plain, n); // warm-up, both
  cpuNs(fast, n);
  const p = [];
  const f = [];
  for (let r = 0; r < 7; r++) {
    p.push(cpuNs(plain, n));
    f.push(cpuNs(fast, n));
  }
  const mp = median(p);
  const mf = median(f);
  console.log(`| ${name} | ${mp.toFixed(0)} | ${mf.toFixed(0)} | ${(mf / mp).toFixed(2)}× |`);
}
