// Correctness first: before anything is measured, each peer is started once and every
// scenario it implements is checked. Identical bodies across peers are checked too.
import net from 'node:net';
import { STATIC_FILES } from '../static-fixtures.mjs';
import { postBody } from '../servers/shared.mjs';
import { request, runLoad } from './procs.mjs';
import { SCENARIOS, wsTarget } from './scenarios.mjs';

/** Sends `depth` GETs in one write and counts the 200 answers (pipelining must work). */
function pipelined(port, urlPath, depth) {
  return new Promise((resolve) => {
    const sock = net.connect(port, '127.0.0.1');
    let data = '';
    const done = (result) => {
      clearTimeout(timer);
      sock.destroy();
      resolve(result);
    };
    const timer = setTimeout(
      () => done({ error: `only ${(data.match(/^HTTP\/1\.1 200/gm) ?? []).length} of ${depth} pipelined answers within 5 s` }),
      5000,
    );
    sock.on('connect', () => sock.write(`GET ${urlPath} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`.repeat(depth)));
    sock.setEncoding('latin1');
    sock.on('data', (d) => {
      data += d;
      const statuses = data.match(/^HTTP\/1\.1 \d{3}/gm) ?? [];
      if (statuses.length >= depth) {
        const bad = statuses.filter((s) => !s.endsWith('200'));
        done(bad.length ? { error: `pipelined answers: ${statuses.join(', ')}` } : {});
      }
    });
    sock.on('error', (err) => done({ error: `pipelined GETs: ${err.message}` }));
  });
}

/**
 * Checks one HTTP scenario on a running server; returns { error } or what is compared
 * across peers ({ body } for the realistic scenarios, { headers } for static ones).
 */
export async function checkHttp(server, scenario, env) {
  const sc = SCENARIOS[scenario];
  const who = `${server.peer} ${sc.method ?? 'GET'} ${sc.path}`;
  let res;
  try {
    res =
      sc.method === 'POST'
        ? await request(server.port, sc.path, { method: 'POST', body: postBody() })
        : await request(server.port, sc.path);
  } catch (err) {
    return { error: `${who}: ${err.message}` };
  }
  const expected = sc.method === 'POST' ? 201 : 200;
  if (res.status !== expected) return { error: `${who}: status ${res.status}, expected ${expected} (body: ${res.body.slice(0, 200)})` };
  if (sc.file !== undefined) {
    const want = env.staticFiles[sc.file];
    if (res.raw.length !== STATIC_FILES[sc.file])
      return { error: `${who}: body of ${res.raw.length} bytes, expected exactly ${STATIC_FILES[sc.file]}` };
    if (!res.raw.equals(want)) return { error: `${who}: body differs from the fixture file (same length, different bytes)` };
    if (!res.headers.etag) return { error: `${who}: no ETag header` };
    if (res.headers['content-encoding'] && res.headers['content-encoding'] !== 'identity')
      return { error: `${who}: content-encoding ${res.headers['content-encoding']} without Accept-Encoding` };
    return { headers: res.headers };
  }
  if (scenario.startsWith('http-hello')) {
    if (res.body !== '') return { error: `${who}: expected an empty body, got ${JSON.stringify(res.body.slice(0, 100))}` };
    if (sc.pipeline) return pipelined(server.port, sc.path, sc.pipeline);
    return {};
  }
  if (res.headers['x-mw'] !== '1') return { error: `${who}: the middleware did not run (no "x-mw: 1" header)` };
  if (scenario === 'http-middleware') return {};
  let json;
  try {
    json = JSON.parse(res.body);
  } catch {
    return { error: `${who}: body is not JSON: ${res.body.slice(0, 200)}` };
  }
  if (!String(res.headers['content-type']).startsWith('application/json'))
    return { error: `${who}: content-type ${res.headers['content-type']}, expected application/json` };
  // Validation must really run: invalid input is a 400, not a 200/201.
  let bad;
  try {
    if (sc.method === 'POST') {
      if (json?.id !== 1001 || json?.tagCount !== 8) return { error: `${who}: unexpected reply ${res.body.slice(0, 200)}` };
      bad = await request(server.port, sc.path, { method: 'POST', body: JSON.stringify({ ...JSON.parse(postBody()), age: 'old' }) });
    } else {
      if (json?.id !== 42) return { error: `${who}: expected "id": 42 in the JSON, got ${JSON.stringify(json?.id)}` };
      bad = await request(server.port, '/users/abc?fields=a,b');
    }
  } catch (err) {
    return { error: `${who} (invalid input): ${err.message}` };
  }
  if (bad.status !== 400) return { error: `${who} with invalid input: status ${bad.status}, expected 400 (is validation wired?)` };
  return { body: res.body };
}

/** A short bench/loadgen run against a WebSocket scenario; the loadgen checks every message. */
export async function checkWs(server, scenario, env) {
  const sc = SCENARIOS[scenario];
  const { protocol, path, envelope } = wsTarget(server.peer, scenario);
  const url = `ws://127.0.0.1:${server.port}${path}`;
  let args;
  if (sc.mode === 'echo')
    args = [
      'echo',
      '--connections',
      '2',
      '--inflight',
      '2',
      '--size',
      String(sc.size),
      sc.binary ? '--binary' : '--text',
      '--duration',
      '0.3',
      '--warmup',
      '0.1',
      '--drain',
      '2',
    ];
  else if (sc.mode === 'fanout')
    args = [
      'fanout',
      '--subscribers',
      '5',
      '--senders',
      '2',
      '--burst',
      '3',
      '--interval-ms',
      '20',
      '--duration',
      '0.3',
      '--warmup',
      '0.1',
      '--drain',
      '2',
    ];
  else args = ['connections', '--count', '20', '--hold', '0.2'];
  if (envelope) args.push('--envelope');
  const r = await runLoad([env.loadgenBin, ...args, '--url', url, '--protocol', protocol, '--quiet', '--setup-timeout', '5'], env, {
    allowFail: true,
  });
  let report;
  try {
    report = JSON.parse(r.text.trim().split('\n').pop());
  } catch {
    return { error: `${server.peer} ${scenario}: loadgen printed no report (exit ${r.code}): ${r.stderr.trim().slice(-500)}` };
  }
  if (!report.ok)
    return {
      error: `${server.peer} ${scenario} (${protocol} ${url}): ${report.reasons.join('; ')}${report.error_samples?.length ? ` [${report.error_samples.slice(0, 3).join(' | ')}]` : ''}`,
    };
  return {};
}
