// Express 5 peer (dynamic scenarios, and express.static for the static ones).
import express from 'express';
import { Params, Query, UserCreate, createdBody, userBody, portFromEnv, ready } from './shared.mjs';

const port = portFromEnv();
const app = express();
app.disable('x-powered-by');
app.disable('etag'); // dynamic answers: neither Tachyon nor uWS hashes JSON bodies

const mw = (req, res, next) => {
  res.setHeader('x-mw', '1');
  next();
};

app.get('/', (req, res) => {
  res.end();
});

app.get('/mw', mw, (req, res) => {
  res.end();
});

app.get('/users/:id', mw, (req, res) => {
  const params = Params.safeParse(req.params);
  const query = Query.safeParse(req.query);
  if (!params.success || !query.success) {
    res.status(400).json({ error: 'Bad Request' });
    return;
  }
  res.json(userBody(params.data.id, query.data.fields));
});

app.post('/users', express.json({ limit: '1mb' }), mw, (req, res) => {
  if (!req.is('application/json')) {
    res.status(415).end();
    return;
  }
  const body = UserCreate.safeParse(req.body);
  if (!body.success) {
    res.status(400).json({ error: 'Bad Request' });
    return;
  }
  res.status(201).json(createdBody(body.data));
});

// Static scenarios: express.static (serve-static) with its defaults: a weak ETag and
// Last-Modified from stat, the body streamed from disk on every request.
if (process.env.STATIC_DIR) app.use('/static', express.static(process.env.STATIC_DIR));

// Malformed JSON: express.json() raises a 400 error; answer it like the others.
app.use((err, req, res, next) => {
  res.status(err.status ?? 500).json({ error: 'Bad Request' });
});

const server = app.listen(port, '127.0.0.1', (err) => {
  if (err) {
    console.error(`express: failed to listen on 127.0.0.1:${port}: ${err.message}`);
    process.exit(1);
  }
  ready(server.address().port);
});
