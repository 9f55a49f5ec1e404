// Express 5 peer.
import express from 'express';
import { Params, Query, userBody, portFromEnv, ready } from './shared.mjs';

const port = portFromEnv();
const app = express();
app.disable('x-powered-by');
app.disable('etag');

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

const server = app.listen(port, '127.0.0.1', (err) => {
  if (err) {
    console.error(`express: failed to listen on 127.0.0.1:${port}: ${err.message}`);
    process.exit(1);
  }
  ready(server.address().port);
});
