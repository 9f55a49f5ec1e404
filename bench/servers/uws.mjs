// Raw uWebSockets.js: the ceiling. Does by hand what the frameworks do for us.
import uWS from 'uWebSockets.js';
import { Params, Query, userBody, portFromEnv, ready } from './shared.mjs';

const port = portFromEnv();
const app = uWS.App();

// The "one middleware" of the other servers, as a plain function call.
function mw(res) {
  res.writeHeader('x-mw', '1');
}

// Minimal query-string parser (same semantics as URLSearchParams for our use:
// first value wins, '+' is a space, percent-decoding).
function parseQuery(qs) {
  const out = {};
  if (!qs) return out;
  for (const part of qs.split('&')) {
    if (!part) continue;
    const eq = part.indexOf('=');
    const k = eq === -1 ? part : part.slice(0, eq);
    const v = eq === -1 ? '' : part.slice(eq + 1);
    const key = decode(k);
    if (!(key in out)) out[key] = decode(v);
  }
  return out;
}
function decode(s) {
  if (s.includes('+')) s = s.replaceAll('+', ' ');
  if (!s.includes('%')) return s;
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

app.get('/', (res) => {
  res.end();
});

app.get('/mw', (res) => {
  res.writeStatus('200 OK');
  mw(res);
  res.end();
});

app.get('/users/:id', (res, req) => {
  // uWS request data is only valid synchronously inside the handler.
  const params = Params.safeParse({ id: req.getParameter(0) });
  const query = Query.safeParse(parseQuery(req.getQuery()));
  if (!params.success || !query.success) {
    res.writeStatus('400 Bad Request').writeHeader('content-type', 'application/json; charset=utf-8');
    res.end('{"error":"Bad Request"}');
    return;
  }
  const body = JSON.stringify(userBody(params.data.id, query.data.fields));
  res.writeStatus('200 OK');
  mw(res);
  res.writeHeader('content-type', 'application/json; charset=utf-8');
  res.end(body);
});

app.any('/*', (res) => {
  res.writeStatus('404 Not Found').end();
});

app.listen('127.0.0.1', port, (listenSocket) => {
  if (!listenSocket) {
    console.error(`uws: failed to listen on 127.0.0.1:${port}`);
    process.exit(1);
  }
  ready(uWS.us_socket_local_port(listenSocket));
});
