// Bun.serve peer (run by the `bun` binary from npm): its native router (`routes`) for HTTP and
// its built-in uWebSockets-based WebSocket server with native pub/sub.
//   /echo    every message back as it came (text stays text, binary stays binary)
//   /fanout  subscribed on open; every message published to the topic (server.publish: the
//            sender gets it too)
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
const JSON_TYPE = 'application/json; charset=utf-8';

// The one middleware: runs before the handler and adds its header.
const withMw = (handler) => (req, server) => handler(req, { 'x-mw': '1' }, server);
const json = (value, status, headers) =>
  new Response(JSON.stringify(value), { status, headers: { ...headers, 'content-type': JSON_TYPE } });
const bad = () => json({ error: 'Bad Request' }, 400);
const queryOf = (url) => {
  const q = url.indexOf('?');
  return q === -1 ? {} : Object.fromEntries(new URLSearchParams(url.slice(q + 1)));
};

const server = Bun.serve({
  port,
  hostname: '127.0.0.1',
  routes: {
    '/': () => new Response(),
    '/mw': withMw((req, headers) => new Response(null, { headers })),
    '/users/:id': {
      GET: withMw((req, headers) => {
        const params = Params.safeParse(req.params);
        const query = Query.safeParse(queryOf(req.url));
        if (!params.success || !query.success) return bad();
        return json(userBody(params.data.id, query.data.fields), 200, headers);
      }),
    },
    '/users': {
      POST: withMw(async (req, headers) => {
        if (!(req.headers.get('content-type') ?? '').startsWith('application/json')) return new Response(null, { status: 415 });
        let body;
        try {
          body = UserCreate.safeParse(await req.json());
        } catch {
          body = { success: false };
        }
        if (!body.success) return bad();
        return json(createdBody(body.data), 201, headers);
      }),
    },
  },
  fetch(req, srv) {
    const path = new URL(req.url).pathname;
    if ((path === '/echo' || path === '/fanout') && srv.upgrade(req, { data: { fanout: path === '/fanout' } })) return undefined;
    return new Response(null, { status: 404 });
  },
  websocket: {
    maxPayloadLength: WS_MAX_PAYLOAD,
    backpressureLimit: WS_MAX_BACKPRESSURE,
    closeOnBackpressureLimit: false,
    idleTimeout: 0,
    perMessageDeflate: false,
    open(ws) {
      if (ws.data.fanout) ws.subscribe(TOPIC);
    },
    message(ws, message) {
      if (ws.data.fanout) server.publish(TOPIC, message);
      else ws.send(message);
    },
  },
});

ready(server.port);
