// ultimate-express 2.x: the Express API re-implemented on uWebSockets.js (the same binary as
// Tachyon, via the root override).
import express from 'ultimate-express';
import { Params, Query, UserCreate, createdBody, userBody, portFromEnv, ready } from './shared.mjs';

const port = portFromEnv();
const app = express();
app.disable('x-powered-by');
app.disable('etag');
// Off: its "declarative responses" compile simple handlers into static uWS responses that never
// run JavaScript, and they turn `res.end()` into a body of "OK" (Express sends nothing).
app.set('declarative responses', false);

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

app.use((err, req, res, next) => {
  res.status(err.status ?? 500).json({ error: 'Bad Request' });
});

try {
  app.listen(port, '127.0.0.1', () => ready(app.port));
} catch (err) {
  console.error(`ultimate-express: failed to listen on 127.0.0.1:${port}: ${err.message}`);
  process.exit(1);
}
