// metrics() in a cluster of 2 workers (real process, real sockets): a scrape answers for the
// whole cluster whichever worker the acceptor hands it to, and a worker that cannot answer in
// time is left out and counted, without hanging the scrape.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Live } from '../../../client/src/index.ts';
import { clientOnEachWorker, get, startCluster, waitFor, type Cluster } from './harness.ts';

let cluster: Cluster;
const clients: Live[] = [];
before(async () => {
  cluster = await startCluster({ WORKERS: '2', METRICS_TIMEOUT: '300' });
});
after(async () => {
  for (const c of clients) c.close();
  await cluster?.stop();
});

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

function parse(text: string): Sample[] {
  const out: Sample[] = [];
  for (const line of text.split('\n')) {
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m) continue;
    const labels: Record<string, string> = {};
    for (const [, k, v] of (m[2] ?? '').matchAll(/([a-zA-Z_]+)="([^"]*)"/g)) labels[k!] = v!;
    out.push({ name: m[1]!, labels, value: Number(m[3]) });
  }
  return out;
}

const total = (samples: Sample[], name: string, where: Record<string, string> = {}) =>
  samples.filter((s) => s.name === name && Object.entries(where).every(([k, v]) => s.labels[k] === v)).reduce((sum, s) => sum + s.value, 0);

async function scrape(): Promise<Sample[]> {
  const res = await get(cluster.port, '/metrics');
  assert.equal(res.status, 200);
  assert.equal(typeof res.body, 'string');
  return parse(res.body);
}

test('http_requests_total and the duration histogram sum every worker, whichever worker is scraped', async () => {
  const n = 21;
  const served = new Map<number, number>();
  for (let i = 0; i < n; i++) {
    const { body } = await get(cluster.port, '/who');
    served.set(body.worker, (served.get(body.worker) ?? 0) + 1);
  }
  assert.deepEqual([...served.keys()].sort(), [1, 2], 'the acceptor spread the requests over both workers');
  // Fresh connections are dealt round-robin: 4 scrapes land on both workers. Scrapes are not counted.
  for (let i = 0; i < 4; i++) {
    const samples = await scrape();
    assert.equal(
      total(samples, 'http_requests_total', { route: '/who', method: 'GET', status: '200' }),
      n,
      `scrape ${i}: every /who request of the cluster`,
    );
    assert.equal(total(samples, 'http_request_duration_seconds_count', { route: '/who' }), n);
    assert.equal(total(samples, 'http_request_duration_seconds_bucket', { route: '/who', le: '+Inf' }), n);
    assert.equal(total(samples, 'http_requests_total', { route: '/metrics' }), 0, 'scrapes are not counted');
    assert.equal(total(samples, 'cluster_workers'), 2);
    assert.equal(total(samples, 'cluster_metrics_workers_missing'), 0);
    // Default metrics stay per worker: process-wide figures must not be summed over threads.
    const cpu = samples.filter((s) => s.name === 'process_cpu_user_seconds_total');
    assert.deepEqual(cpu.map((s) => s.labels.worker).sort(), ['1', '2']);
    assert.deepEqual(
      samples
        .filter((s) => s.name === 'nodejs_heap_size_used_bytes')
        .map((s) => s.labels.worker)
        .sort(),
      ['1', '2'],
    );
  }
});

test('websocket_connections counts the sockets on both workers', async () => {
  const { byWorker, spare } = await clientOnEachWorker(cluster.port, 2);
  clients.push(...byWorker.values(), ...spare);
  const open = clients.length;
  assert.ok(open >= 2);
  for (let i = 0; i < 4; i++) assert.equal(total(await scrape(), 'websocket_connections'), open, `scrape ${i}`);
  for (const c of clients.splice(0)) c.close();
  await waitFor(async () => total(await scrape(), 'websocket_connections') === 0, 5000, 'no sockets counted once closed');
});

test('a worker that cannot answer in time is left out, counted and logged; the scrape is not held up', async () => {
  // /block answers, then blocks its worker's event loop for 1.5 s. The next fresh connection
  // usually lands on the other worker, whose scrape must answer after its 300 ms timeout.
  let missing: Sample[] | undefined;
  for (let attempt = 0; attempt < 4 && missing === undefined; attempt++) {
    await get(cluster.port, '/block?ms=1500');
    await new Promise((r) => setTimeout(r, 100)); // the block starts 10 ms after the answer
    const started = Date.now();
    const samples = await scrape();
    const took = Date.now() - started;
    if (total(samples, 'cluster_metrics_workers_missing') === 1) {
      assert.ok(took < 1200, `answered in ${took} ms, not after the blocked worker`);
      missing = samples;
    }
    await new Promise((r) => setTimeout(r, 1600)); // let the blocked worker recover
  }
  assert.ok(missing, 'a scrape on the free worker while the other was blocked');
  assert.equal(missing.filter((s) => s.name === 'process_cpu_user_seconds_total').length, 1, "only the answering worker's default metrics");
  await waitFor(() => cluster.lines.some((l) => l?.msg?.includes('did not answer the scrape')), 3000, 'the log line');
  const line = cluster.lines.find((l) => l?.msg?.includes('did not answer the scrape'));
  assert.equal(line.missing.length, 1);
  assert.equal(line.level, 'warn');
  // Recovered: complete again.
  await waitFor(async () => total(await scrape(), 'cluster_metrics_workers_missing') === 0, 5000, 'a complete scrape again');
});
