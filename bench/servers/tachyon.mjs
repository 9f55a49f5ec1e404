// The framework under test.
import { App } from 'tachyon';
import { Params, Query, userBody, portFromEnv, ready } from './shared.mjs';

const port = portFromEnv();
const app = new App();

const mw = (req, res, next) => {
  res.header('x-mw', '1');
  return next();
};

app.get('/', (req, res) => res.end());

app.get('/mw', mw, (req, res) => res.end());

app.get('/users/:id', { params: Params, query: Query }, mw, (req) =>
  userBody(req.params.id, req.query.fields),
);

// Static scenarios: the files the harness generated (bench/static-fixtures.mjs), with the
// framework's defaults (in memory, precompressed variants, ETag, Last-Modified).
if (process.env.STATIC_DIR) app.static('/static', process.env.STATIC_DIR);

const server = await app.listen({ port, host: '127.0.0.1' });
ready(server.port);
