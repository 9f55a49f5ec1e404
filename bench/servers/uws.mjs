// Raw uWebSockets.js: the ceiling. Does by hand what the frameworks do for us.
import { hash } from 'node:crypto';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import uWS from 'uWebSockets.js';
import {
  Params,
  Query,
  UserCreate,
  createdBody,
  userBody,
  portFromEnv,
  ready,
  TOPIC,
  WS_MAX_BACKPRESSURE,
  WS_MAX_PAYLOAD,
} from './shared.mjs';

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

// POST /users: read the JSON body (at most 1 MiB), parse it, validate it with the same zod
// schema, answer 201 with the created record. The request object is gone once the handler
// returns, so the header is read first; the answer is corked because it is written from a
// later callback.
const BODY_LIMIT = 1 << 20;
app.post('/users', (res, req) => {
  const type = req.getHeader('content-type');
  let aborted = false;
  res.onAborted(() => {
    aborted = true;
  });
  if (!type.startsWith('application/json')) {
    res.cork(() => res.writeStatus('415 Unsupported Media Type').end());
    return;
  }
  let chunks = [];
  let size = 0;
  res.onData((ab, isLast) => {
    if (aborted || chunks === null) return;
    size += ab.byteLength;
    if (size > BODY_LIMIT) {
      chunks = null;
      res.cork(() => res.writeStatus('413 Payload Too Large').end());
      return;
    }
    chunks.push(Buffer.from(ab.slice(0))); // the ArrayBuffer is only valid during this call
    if (!isLast) return;
    let parsed;
    try {
      parsed = UserCreate.safeParse(JSON.parse(Buffer.concat(chunks).toString('utf8')));
    } catch {
      parsed = { success: false };
    }
    res.cork(() => {
      if (!parsed.success) {
        res.writeStatus('400 Bad Request').writeHeader('content-type', 'application/json; charset=utf-8').end('{"error":"Bad Request"}');
        return;
      }
      res.writeStatus('201 Created');
      mw(res);
      res.writeHeader('content-type', 'application/json; charset=utf-8').end(JSON.stringify(createdBody(parsed.data)));
    });
  });
});

// WebSocket echo: every message back with the same binary flag.
app.ws('/echo', {
  maxPayloadLength: WS_MAX_PAYLOAD,
  maxBackpressure: WS_MAX_BACKPRESSURE,
  idleTimeout: 0,
  message: (ws, message, isBinary) => {
    ws.send(message, isBinary);
  },
});

// WebSocket fan-out: every connection subscribes to the topic on open, and every message
// received is published to it (app.publish: the sender gets it too).
app.ws('/fanout', {
  maxPayloadLength: WS_MAX_PAYLOAD,
  maxBackpressure: WS_MAX_BACKPRESSURE,
  idleTimeout: 0,
  open: (ws) => {
    ws.subscribe(TOPIC);
  },
  message: (ws, message, isBinary) => {
    app.publish(TOPIC, message, isBinary);
  },
});

// Static scenarios: the files of STATIC_DIR read once into Buffers, with every header
// precomputed. The same header set as Tachyon's `app.static` sends for these files
// (content-type, etag, last-modified, cache-control, accept-ranges, vary; Tachyon keeps
// brotli/gzip variants of text files, hence `Vary: Accept-Encoding` on the identity bytes
// too), and the same ETag format. The only per-request work besides the lookup is the
// If-None-Match comparison a static server must do.
const MIME = {
  '.txt': 'text/plain; charset=utf-8',
  '.html': 'text/html; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
};
const files = new Map();
if (process.env.STATIC_DIR) {
  const dir = process.env.STATIC_DIR;
  for (const name of readdirSync(dir)) {
    const abs = path.join(dir, name);
    const st = statSync(abs);
    if (!st.isFile()) continue;
    const body = readFileSync(abs);
    files.set(`/static/${name}`, {
      body,
      etag: `"${body.length.toString(16)}-${hash('sha1', body, 'base64url').slice(0, 16)}"`,
      contentType: MIME[path.extname(name)] ?? 'application/octet-stream',
      lastModified: new Date(Math.floor(st.mtimeMs / 1000) * 1000).toUTCString(),
    });
  }
}

app.get('/static/*', (res, req) => {
  const f = files.get(req.getUrl());
  if (f === undefined) {
    res.writeStatus('404 Not Found').end();
    return;
  }
  const notModified = req.getHeader('if-none-match') === f.etag;
  res.cork(() => {
    if (notModified) {
      res
        .writeStatus('304 Not Modified')
        .writeHeader('etag', f.etag)
        .writeHeader('last-modified', f.lastModified)
        .writeHeader('cache-control', 'public, max-age=0')
        .writeHeader('vary', 'Accept-Encoding')
        .endWithoutBody();
      return;
    }
    res
      .writeStatus('200 OK')
      .writeHeader('content-type', f.contentType)
      .writeHeader('etag', f.etag)
      .writeHeader('last-modified', f.lastModified)
      .writeHeader('cache-control', 'public, max-age=0')
      .writeHeader('accept-ranges', 'bytes')
      .writeHeader('vary', 'Accept-Encoding')
      .end(f.body);
  });
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
