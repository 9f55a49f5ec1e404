// hyper-express 6.18 (on the same uWebSockets.js binary as Tachyon, via the root override).
// 7.x needs a newer uWS API than the one the repository pins.
import HyperExpress from 'hyper-express';
import uWS from 'uWebSockets.js';
import { Params, Query, UserCreate, createdBody, userBody, portFromEnv, ready } from './shared.mjs';

const port = portFromEnv();
const server = new HyperExpress.Server({ max_body_length: 1 << 20 });

const mw = (req, res, next) => {
  res.header('x-mw', '1');
  next();
};

server.get('/', (req, res) => {
  res.send();
});

server.get('/mw', mw, (req, res) => {
  res.send();
});

server.get('/users/:id', mw, (req, res) => {
  const params = Params.safeParse(req.path_parameters);
  const query = Query.safeParse(req.query_parameters);
  if (!params.success || !query.success) {
    res.status(400).json({ error: 'Bad Request' });
    return;
  }
  res.json(userBody(params.data.id, query.data.fields));
});

server.post('/users', mw, async (req, res) => {
  if (!String(req.headers['content-type']).startsWith('application/json')) {
    res.status(415).send();
    return;
  }
  let body;
  try {
    body = UserCreate.safeParse(JSON.parse(await req.text()));
  } catch {
    body = { success: false };
  }
  if (!body.success) {
    res.status(400).json({ error: 'Bad Request' });
    return;
  }
  res.status(201).json(createdBody(body.data));
});

let listenSocket;
try {
  listenSocket = await server.listen(port, '127.0.0.1');
} catch (err) {
  console.error(`hyper-express: failed to listen on 127.0.0.1:${port}: ${err?.message ?? err}`);
  process.exit(1);
}
ready(uWS.us_socket_local_port(listenSocket));
