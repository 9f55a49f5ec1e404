import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Counter, Registry } from 'prom-client';
import { App, HttpError, metrics, type Socket } from '../../src/index.ts';
import { eventually, openWs, rawWebSocket, start } from '../helpers.ts';

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** Parses the Prometheus text format (what a scraper reads). */
function parse(text: string): { samples: Sample[]; types: Map<string, string> } {
  const samples: Sample[] = [];
  const types = new Map<string, string>();
  for (const line of text.split('\n')) {
    if (line === '') continue;
    const type = /^# TYPE (\S+) (\S+)$/.exec(line);
    if (type) types.set(type[1]!, type[2]!);
    if (line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    assert.ok(m, `unparsable line: ${line}`);
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? '').matchAll(/([a-zA-Z_]\w*)="((?:[^"\\]|\\.)*)"/g)) labels[l[1]!] = l[2]!;
    samples.push({ name: m[1]!, labels, value: Number(m[3]) });
  }
  return { samples, types };
}

function value(samples: Sample[], name: string, labels: Record<string, string> = {}): number | undefined {
  return samples.find((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))?.value;
}

async function scrape(url: string) {
  const res = await fetch(url);
  assert.equal(res.status, 200);
  assert.match(res.headers.get('content-type') ?? '', /^text\/plain; version=0\.0\.4/);
  return parse(await res.text());
}

describe('metrics', () => {
  test('requests by route pattern, method and status; durations; in flight; WebSocket connections; event loop', async () => {
    const app = new App();
    app.use(metrics());
    app.get('/users/:id', (req) => ({ id: req.params.id }));
    app.post('/users', (req, res) => {
      res.status(201);
      return { ok: true };
    });
    app.get('/boom', () => {
      throw new HttpError(418, 'teapot');
    });
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    app.get('/slow', async () => {
      await held;
      return 'slow';
    });
    app.any('/anything', () => 'any');
    app.ws('/ws', {});
    const srv = await start(app);
    try {
      for (const id of ['1', '2', '3']) await (await fetch(`${srv.url}/users/${id}`)).text();
      await (await fetch(srv.url + '/users', { method: 'POST', body: '{}', headers: { 'content-type': 'application/json' } })).text();
      await (await fetch(srv.url + '/boom')).text();
      await (await fetch(srv.url + '/missing/page')).text();
      for (const m of ['PURGE', 'FOOBAR']) await (await fetch(srv.url + '/anything', { method: m })).text();
      const slow = fetch(srv.url + '/slow').then((r) => r.text());
      await eventually(() => app.inflight === 1);
      const ws = await openWs(`ws://127.0.0.1:${srv.port}/ws`);
      await eventually(() => app.connections === 1);

      let { samples, types } = await scrape(srv.url + '/metrics');
      assert.equal(types.get('http_requests_total'), 'counter');
      assert.equal(types.get('http_request_duration_seconds'), 'histogram');
      assert.equal(value(samples, 'http_requests_total', { route: '/users/:id', method: 'GET', status: '200' }), 3);
      assert.equal(value(samples, 'http_requests_total', { route: '/users', method: 'POST', status: '201' }), 1);
      assert.equal(value(samples, 'http_requests_total', { route: '/boom', method: 'GET', status: '418' }), 1);
      assert.equal(value(samples, 'http_requests_total', { route: '/*', method: 'GET', status: '404' }), 1);
      // Unknown methods share one label value: clients cannot mint series.
      assert.equal(value(samples, 'http_requests_total', { route: '/anything', method: 'OTHER', status: '200' }), 2);
      assert.ok(
        !samples.some((s) => s.labels.route === '/users/1' || s.labels.method === 'PURGE'),
        'raw paths or methods leaked into labels',
      );
      assert.equal(value(samples, 'http_requests_in_flight'), 1);
      assert.equal(value(samples, 'websocket_connections'), 1);
      assert.ok(value(samples, 'nodejs_eventloop_lag_seconds') !== undefined);
      assert.ok(value(samples, 'process_cpu_seconds_total') !== undefined);
      // Outside a cluster: no cluster series, no worker label.
      assert.equal(value(samples, 'cluster_workers'), undefined);
      assert.ok(!samples.some((s) => s.labels.worker !== undefined));
      // The scrape itself is not counted.
      assert.equal(samples.filter((s) => s.name === 'http_requests_total' && s.labels.route === '/*').length, 1);

      release();
      assert.equal(await slow, 'slow');
      ws.ws.close();
      await eventually(() => app.connections === 0);
      ({ samples } = await scrape(srv.url + '/metrics'));
      assert.equal(value(samples, 'http_requests_in_flight'), 0);
      assert.equal(value(samples, 'websocket_connections'), 0);
      const slowLabels = { route: '/slow', method: 'GET', status: '200' };
      assert.equal(value(samples, 'http_request_duration_seconds_count', slowLabels), 1);
      assert.equal(value(samples, 'http_request_duration_seconds_bucket', { ...slowLabels, le: '+Inf' }), 1);
      const users = { route: '/users/:id', method: 'GET', status: '200' };
      assert.equal(value(samples, 'http_request_duration_seconds_bucket', { ...users, le: '+Inf' }), 3);
      assert.equal(value(samples, 'http_request_duration_seconds_count', users), 3);
      const buckets = samples
        .filter((s) => s.name === 'http_request_duration_seconds_bucket' && s.labels.route === '/users/:id')
        .map((s) => s.value);
      assert.deepEqual(
        buckets,
        [...buckets].sort((a, b) => a - b),
        'buckets are cumulative',
      );
      assert.ok(value(samples, 'http_request_duration_seconds_sum', users)! < 1);
    } finally {
      await srv.close();
    }
  });

  test('WebSocket messages in and out, publishes, slow consumers (messages dropped, sockets closed)', async () => {
    const app = new App();
    const mw = metrics({ defaultMetrics: false });
    app.use(mw);
    app.ws('/live', {
      events: {
        say: { handler: (ws, data) => void ws.publish('room', 'said', data) },
        shout: { handler: (_ws, data) => void app.publish('room', 'shout', data) },
      },
      message: (ws) => void ws.sendRaw('raw back'),
    });
    const big = Buffer.alloc(64 * 1024, 1);
    app.ws('/slow', {
      maxBackpressure: 64 * 1024,
      open(ws) {
        for (let i = 0; i < 400 && !ws.closed; i++) ws.sendRaw(big);
      },
    });
    const srv = await start(app);
    try {
      const c = await openWs(`ws://127.0.0.1:${srv.port}/live`);
      c.ws.send(JSON.stringify({ type: 'subscribe', topic: 'room', ref: 1 }));
      await c.next((m) => m.type === 'subscribed');
      c.ws.send(JSON.stringify({ type: 'event', event: 'shout', data: 1, ref: 2 }));
      await c.next((m) => m.event === 'shout');
      c.ws.send(JSON.stringify({ type: 'event', event: 'say', data: 2, ref: 3 }));
      await c.next((m) => m.ref === 3);
      c.ws.send('not a protocol frame');
      await c.next((m) => m === 'raw back');
      let { samples, types } = await scrape(`${srv.url}/metrics`);
      assert.equal(types.get('websocket_messages_received_total'), 'counter');
      assert.equal(value(samples, 'websocket_messages_received_total'), 4);
      // subscribed, reply to shout, reply to say, raw back (the publishes are counted apart).
      assert.equal(value(samples, 'websocket_messages_sent_total'), 4);
      assert.equal(value(samples, 'websocket_publishes_total'), 2);
      assert.equal(value(samples, 'websocket_slow_consumers_closed_total'), 0);
      c.ws.close();

      const slow = await rawWebSocket(srv.port, '/slow');
      slow.pause();
      await eventually(() => app.connections === 0, 5000);
      ({ samples } = await scrape(`${srv.url}/metrics`));
      assert.ok(value(samples, 'websocket_slow_consumer_dropped_messages_total')! >= 1);
      assert.equal(value(samples, 'websocket_slow_consumers_closed_total'), 1);
      slow.destroy();
    } finally {
      await srv.close();
    }
  });

  test('volatile messages: a publish counts once, a skipped message per socket in websocket_volatile_dropped_messages_total', async () => {
    const app = new App();
    app.use(metrics({ defaultMetrics: false }));
    let sock: Socket<unknown> | undefined;
    app.ws('/vol', { open: (ws) => void ((sock = ws), ws.subscribe('cursors')), maxBackpressure: 16 * 1024 * 1024, backpressure: 'drop' });
    const srv = await start(app);
    try {
      const reader = await openWs(`ws://127.0.0.1:${srv.port}/vol`);
      await eventually(() => sock !== undefined);
      assert.equal(app.publish('cursors', 'move', 1, { volatile: true }), true);
      await reader.next((m) => m.event === 'move');
      let { samples } = await scrape(`${srv.url}/metrics`);
      assert.equal(value(samples, 'websocket_publishes_total'), 1);
      assert.equal(value(samples, 'websocket_messages_sent_total'), 0, 'a publish is not a send');
      assert.equal(value(samples, 'websocket_volatile_dropped_messages_total'), 0);
      reader.ws.close();
      await eventually(() => app.connections === 0);

      sock = undefined;
      const slow = await rawWebSocket(srv.port, '/vol');
      slow.pause();
      await eventually(() => sock !== undefined);
      const big = 'x'.repeat(64 * 1024);
      for (let i = 0; i < 400 && sock!.bufferedAmount === 0; i++) sock!.send('fill', big);
      assert.ok(sock!.bufferedAmount > 0, 'under backpressure');
      for (let i = 0; i < 10; i++) assert.equal(sock!.send('cursor', i, { volatile: true }), 'dropped');
      for (let i = 0; i < 5; i++) app.publish('cursors', 'move', i, { volatile: true });
      ({ samples } = await scrape(`${srv.url}/metrics`));
      assert.equal(value(samples, 'websocket_volatile_dropped_messages_total'), 15);
      slow.destroy();
    } finally {
      await srv.close();
    }
  });

  test('custom path, prefix, buckets and registry (your own metrics served too); no default metrics', async () => {
    const registry = new Registry();
    const own = new Counter({ name: 'orders_total', help: 'orders', registers: [registry] });
    own.inc(5);
    const mw = metrics({ path: '/internal/metrics', prefix: 'shop_', registry, defaultMetrics: false, buckets: [0.5, 1] });
    assert.equal(mw.registry, registry);
    const app = new App();
    app.use(mw);
    app.get('/', () => 'home');
    const srv = await start(app);
    try {
      await (await fetch(srv.url + '/')).text();
      const { samples } = await scrape(srv.url + '/internal/metrics');
      assert.equal(value(samples, 'orders_total'), 5);
      assert.equal(value(samples, 'shop_http_requests_total', { route: '/', status: '200' }), 1);
      assert.deepEqual(
        samples.filter((s) => s.name === 'shop_http_request_duration_seconds_bucket').map((s) => s.labels.le),
        ['0.5', '1', '+Inf'],
      );
      assert.equal(value(samples, 'process_cpu_seconds_total'), undefined);
      assert.equal((await fetch(srv.url + '/metrics')).status, 404);
    } finally {
      await srv.close();
    }
  });

  test('options are checked at setup', () => {
    const registry = new Registry();
    metrics({ registry, defaultMetrics: false });
    assert.throws(() => metrics({ registry }), /one metrics\(\) per registry/);
    assert.throws(() => metrics({ path: 'metrics' }), /path must start with/);
    assert.throws(() => metrics({ prefix: 'my-app' }), /prefix must be a valid Prometheus name prefix/);
    assert.throws(() => metrics({ registry: {} as never }), /registry must be a prom-client Registry/);
    assert.throws(() => metrics({ buckets: [1, 0.5] }), /buckets must be increasing/);
    assert.throws(() => metrics({ buckets: [] }), /buckets/);
    assert.throws(() => metrics({ route: true } as never), /unknown option "route"/);
    for (const bad of [-1, 1.5, 60_001, '1000', NaN])
      assert.throws(() => metrics({ clusterTimeout: bad as never }), /clusterTimeout must be a whole number/);
  });
});
