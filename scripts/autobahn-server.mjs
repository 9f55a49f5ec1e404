// The server Autobahn|Testsuite's fuzzing client runs against (scripts/autobahn.mjs starts
// it): a Tachyon App with two WebSocket routes that echo every raw text or binary message
// back unchanged, `/echo` without compression and `/echo-deflate` with permessage-deflate.
// Everything else is Tachyon's defaults (pings, idle timeout, the protocol-frame check), so
// the run measures what an app gets, with limits raised only where the suite needs them:
// its largest messages are 16 MiB (cases 9.x), echoed whole before the client reads them.
// Prints `READY <port>` once listening; SIGTERM closes it (`signals`). PORT=0 (default) picks a free port.
// Imports the built framework (packages/server/dist): `npx tsc -b packages/server` first.
import { App, jsonLogger } from '../packages/server/dist/index.js';

const MAX_MESSAGE = 16 * 1024 * 1024;

const app = new App({ logger: jsonLogger(process.env.LOG_LEVEL ?? 'warn') });

/** One echo route; `compression` is the only difference between the two. */
const echo = (compression) => ({
  allowedOrigins: '*', // the fuzzing client sends an Origin of its own
  compression,
  maxPayloadLength: MAX_MESSAGE,
  // A 16 MiB echo is queued whole while the client is still sending: over the default 1 MiB
  // the socket would be closed with 4429 (backpressure), which is Tachyon's policy, not the
  // protocol under test.
  maxBackpressure: 4 * MAX_MESSAGE,
  message(ws, data, isBinary) {
    ws.sendRaw(data, isBinary); // uWS copies the bytes: `data` may die after this call
  },
});

app.ws('/echo', echo(false));
app.ws('/echo-deflate', echo(true));

const server = await app.listen({ port: Number(process.env.PORT ?? 0), host: '127.0.0.1', signals: true, shutdownTimeout: 2000 });
console.log(`READY ${server.port}`);
