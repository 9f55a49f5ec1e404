// Deno.serve peer (run by the `deno` binary from npm), WebSockets through
// Deno.upgradeWebSocket. Routing is by hand on the request URL, like the node:http peer.
//   /echo    every message back as it came
//   /fanout  every connection joins the topic; every message goes to every member (the
//            sender too): Deno has no native pub/sub, so a loop over the members
import { Params, Query, UserCreate, createdBody, userBody, portFromEnv, ready } from './shared.mjs';

const port = portFromEnv();
const JSON_TYPE = 'application/json; charset=utf-8';
const json = (value, status, headers) =>
  new Response(JSON.stringify(value), { status, headers: { ...headers, 'content-type': JSON_TYPE } });
const bad = () => json({ error: 'Bad Request' }, 400);
const members = new Set();

function websocket(req, fanout) {
  const { socket, response } = Deno.upgradeWebSocket(req, { idleTimeout: 0 });
  socket.binaryType = 'arraybuffer';
  if (fanout) {
    socket.onopen = () => members.add(socket);
    socket.onclose = () => members.delete(socket);
    socket.onmessage = (e) => {
      for (const m of members) if (m.readyState === 1) m.send(e.data);
    };
  } else {
    socket.onmessage = (e) => socket.send(e.data);
  }
  socket.onerror = () => {};
  return response;
}

async function createUser(req, headers) {
  if (!(req.headers.get('content-type') ?? '').startsWith('application/json')) return new Response(null, { status: 415 });
  let body;
  try {
    body = UserCreate.safeParse(await req.json());
  } catch {
    body = { success: false };
  }
  if (!body.success) return bad();
  return json(createdBody(body.data), 201, headers);
}

function handler(req) {
  const url = req.url;
  const start = url.indexOf('/', url.indexOf('//') + 2);
  const q = url.indexOf('?', start);
  const path = q === -1 ? url.slice(start) : url.slice(start, q);
  const method = req.method;
  if (method === 'GET') {
    if (path === '/') return new Response();
    if (path === '/mw') return new Response(null, { headers: { 'x-mw': '1' } });
    if (path.startsWith('/users/') && path.indexOf('/', 7) === -1) {
      const headers = { 'x-mw': '1' };
      const params = Params.safeParse({ id: decodeURIComponent(path.slice(7)) });
      const query = Query.safeParse(Object.fromEntries(new URLSearchParams(q === -1 ? '' : url.slice(q + 1))));
      if (!params.success || !query.success) return bad();
      return json(userBody(params.data.id, query.data.fields), 200, headers);
    }
    if (path === '/echo' || path === '/fanout') return websocket(req, path === '/fanout');
  } else if (method === 'POST' && path === '/users') {
    return createUser(req, { 'x-mw': '1' });
  }
  return new Response(null, { status: 404 });
}

Deno.serve({ port, hostname: '127.0.0.1', onListen: ({ port: p }) => ready(p) }, handler);
