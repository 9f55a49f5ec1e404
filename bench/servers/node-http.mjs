// node:http peer: the same work as the others, written by hand on Node's own HTTP server.
import http from 'node:http';
import { Params, Query, UserCreate, createdBody, userBody, portFromEnv, ready } from './shared.mjs';

const port = portFromEnv();
const BODY_LIMIT = 1 << 20;

// The "one middleware" of the other servers, as a plain function call.
function mw(res) {
  res.setHeader('x-mw', '1');
}

function sendJson(res, status, value) {
  const body = JSON.stringify(value);
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

function badRequest(res) {
  sendJson(res, 400, { error: 'Bad Request' });
}

function createUser(req, res) {
  if (!String(req.headers['content-type']).startsWith('application/json')) {
    res.writeHead(415).end();
    return;
  }
  const chunks = [];
  let size = 0;
  req.on('data', (c) => {
    size += c.length;
    if (size > BODY_LIMIT) {
      res.writeHead(413).end();
      req.destroy();
      return;
    }
    chunks.push(c);
  });
  req.on('end', () => {
    let parsed;
    try {
      parsed = UserCreate.safeParse(JSON.parse(Buffer.concat(chunks).toString('utf8')));
    } catch {
      parsed = { success: false };
    }
    if (!parsed.success) return badRequest(res);
    mw(res);
    sendJson(res, 201, createdBody(parsed.data));
  });
}

const server = http.createServer((req, res) => {
  const url = req.url;
  const q = url.indexOf('?');
  const path = q === -1 ? url : url.slice(0, q);
  if (req.method === 'GET' || req.method === 'HEAD') {
    if (path === '/') return res.end();
    if (path === '/mw') {
      mw(res);
      return res.end();
    }
    if (path.startsWith('/users/') && path.indexOf('/', 7) === -1) {
      mw(res);
      const params = Params.safeParse({ id: decodeURIComponent(path.slice(7)) });
      const query = Query.safeParse(Object.fromEntries(new URLSearchParams(q === -1 ? '' : url.slice(q + 1))));
      if (!params.success || !query.success) return badRequest(res);
      return sendJson(res, 200, userBody(params.data.id, query.data.fields));
    }
  } else if (req.method === 'POST' && path === '/users') {
    return createUser(req, res);
  }
  res.writeHead(404).end();
});

server.keepAliveTimeout = 60_000;
server.listen(port, '127.0.0.1', () => ready(server.address().port));
server.on('error', (err) => {
  console.error(`node-http: failed to listen on 127.0.0.1:${port}: ${err.message}`);
  process.exit(1);
});
