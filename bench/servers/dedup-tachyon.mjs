// Tachyon server for bench/dedup.mjs: the same slow handler with and without request dedup.
//   GET /page          { dedup: true }
//   GET /page-nodedup  no dedup
//   GET /calls         how many times each handler ran so far, and the arrival spread of
//                      each route's requests since the previous /calls (JSON)
// Each handler counts its calls and takes DEDUP_DELAY_MS (default 5) on a timer, then
// returns the same JSON page for everyone.
import { setTimeout as sleep } from 'node:timers/promises';
import { App } from '@tachyon/server';
import { portFromEnv, ready } from './shared.mjs';

const port = portFromEnv();
const delay = Number(process.env.DEDUP_DELAY_MS ?? 5);
const app = new App();
const calls = { page: 0, nodedup: 0 };

// Arrival times of the requests, taken by an app middleware (it runs before the dedup
// gate, so followers are seen too): first and last since the previous /calls.
const fresh = () => ({ page: { first: Infinity, last: -Infinity }, nodedup: { first: Infinity, last: -Infinity } });
let arrivals = fresh();
app.use((req, res, next) => {
  const p = req.path;
  const a = p === '/page' ? arrivals.page : p === '/page-nodedup' ? arrivals.nodedup : undefined;
  if (a !== undefined) {
    const t = performance.now();
    if (t < a.first) a.first = t;
    a.last = t;
  }
  return next();
});

// About 1 KiB of JSON, identical for every request (nothing per-call in it, so the
// responses of the no-dedup route can be compared too).
const page = {
  title: 'Popular page',
  items: Array.from({ length: 20 }, (_, i) => ({ id: i + 1, name: `Item ${i + 1}`, price: 10 + i, tags: ['a', 'b'] })),
};

app.get('/page', { dedup: true }, async () => {
  calls.page++;
  await sleep(delay);
  return page;
});

app.get('/page-nodedup', async () => {
  calls.nodedup++;
  await sleep(delay);
  return page;
});

app.get('/calls', () => {
  const spread = (a) => (a.first === Infinity ? null : a.last - a.first);
  const out = { ...calls, arrivalSpreadMs: { page: spread(arrivals.page), nodedup: spread(arrivals.nodedup) } };
  arrivals = fresh();
  return out;
});

const server = await app.listen({ port, host: '127.0.0.1' });
ready(server.port);
