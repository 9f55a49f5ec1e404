// The Tachyon app every Tachyon peer serves (tachyon, tachyon-coalesced, and the cluster
// measurements of bench/cluster.mjs), through the public API only.
import { App } from '@tachyon/server';
import { Params, Query, UserCreate, createdBody, userBody, WS_MAX_PAYLOAD } from './shared.mjs';

/** The App options the peer's environment asks for (TACHYON_COALESCE, TACHYON_COMPILE_SCHEMAS). */
export function baseOptions() {
  const options = {};
  // TACHYON_COALESCE=1 (the `tachyon-coalesced` peer): publishes within one event-loop
  // iteration go out as one batch frame per topic.
  if (process.env.TACHYON_COALESCE === '1') options.coalescePublishes = true;
  return { ...options, ...schemaOptions() };
}

/**
 * TACHYON_COMPILE_SCHEMAS=0 (the `tachyon-zod-runtime` peer; the game server too): Zod's
 * safeParse as the other peers run it, not the compiled parser Tachyon uses by default.
 */
export function schemaOptions() {
  return process.env.TACHYON_COMPILE_SCHEMAS === '0' ? { compileSchemas: false } : {};
}

/** `install(app)` runs before the routes are declared (the middleware peers' app-wide middleware). */
export function createApp(options = baseOptions(), install = undefined) {
  const app = new App(options);
  install?.(app);

  const mw = (req, res, next) => {
    res.header('x-mw', '1');
    return next();
  };

  app.get('/', (req, res) => res.end());

  app.get('/mw', mw, (req, res) => res.end());

  app.get('/users/:id', { params: Params, query: Query }, mw, (req) => userBody(req.params.id, req.query.fields));

  app.post('/users', { body: UserCreate }, mw, (req, res) => res.status(201).json(createdBody(req.body)));

  // Static scenarios: the files the harness generated (bench/static-fixtures.mjs), with the
  // framework's defaults (in memory, precompressed variants, ETag, Last-Modified).
  if (process.env.STATIC_DIR) app.static('/static', process.env.STATIC_DIR);

  // WebSocket echo: frames that are not protocol frames reach `message` and go back as they came.
  app.ws('/echo', {
    message(ws, data, isBinary) {
      ws.sendRaw(data, isBinary);
    },
    maxPayloadLength: WS_MAX_PAYLOAD,
    idleTimeout: 0,
  });

  // WebSocket fan-out with Tachyon's protocol: each socket is subscribed on open (the
  // loadgen's subscribe frame for the same topic is allowed by the default policy), and the
  // `bench:publish` event publishes its data to every subscriber as
  // {"topic":"bench","event":"bench","data":…}.
  app.ws('/fanout', {
    open(ws) {
      ws.subscribe('bench');
    },
    events: {
      'bench:publish': {
        handler(ws, data) {
          app.publish('bench', 'bench', data);
        },
      },
    },
    maxPayloadLength: WS_MAX_PAYLOAD,
    idleTimeout: 0,
  });
  return app;
}
