// A small raw uWebSockets.js server to try the load generator by hand. Run it from the repo
// root so that uWebSockets.js resolves:
//
//   PORT=9001 node bench/loadgen/test-servers/uws-peer.mjs
//
// Routes:
//   /echo        echoes every message back with the same binary flag
//   /fanout      every connection is subscribed to "bench" on open; every message received
//                is published to "bench" (app.publish: the sender gets it too)
//   /tachyon     a MOCK of Tachyon's protocol (docs/protocol.md), just the frames the
//                loadgen uses: subscribe -> subscribed, event "bench:publish" -> publish
//                {"topic":T,"event":"bench","data":...}; other frames are echoed
//   /socket.io/  a MOCK of Socket.IO v4 on the websocket transport: open packet, `40`
//                connect, pings every PING_MS (default 25000) with a pong check, events
//                "join" (subscribe), "bench:publish" (broadcast as "bench"), "echo"
//
// The mocks only exist to exercise the loadgen's protocol code; benchmark the real servers.
import uWS from 'uWebSockets.js';

const port = Number(process.env.PORT ?? 0);
const pingMs = Number(process.env.PING_MS ?? 25000);
const app = uWS.App();
const dec = new TextDecoder();
const big = { maxPayloadLength: 16 * 1024 * 1024, maxBackpressure: 64 * 1024 * 1024, idleTimeout: 120 };

app.ws('/echo', {
  ...big,
  message: (ws, msg, isBinary) => {
    ws.send(msg, isBinary);
  },
});

app.ws('/fanout', {
  ...big,
  open: (ws) => ws.subscribe('bench'),
  message: (ws, msg, isBinary) => {
    app.publish('bench', msg, isBinary);
  },
});

app.ws('/tachyon', {
  ...big,
  message: (ws, msg, isBinary) => {
    const text = isBinary ? '' : dec.decode(msg);
    if (!text.startsWith('{"type":"')) {
      ws.send(msg, isBinary);
      return;
    }
    let f;
    try {
      f = JSON.parse(text);
    } catch {
      ws.send(JSON.stringify({ type: 'error', code: 'BAD_FRAME', message: 'malformed JSON' }));
      return;
    }
    if (f.type === 'subscribe') {
      if (f.topic.startsWith('__')) {
        ws.send(JSON.stringify({ type: 'denied', topic: f.topic, ref: f.ref, reason: 'reserved topic' }));
      } else {
        ws.subscribe(f.topic);
        ws.send(JSON.stringify({ type: 'subscribed', topic: f.topic, ref: f.ref }));
      }
    } else if (f.type === 'event' && f.event === 'bench:publish') {
      app.publish('bench', `{"topic":"bench","event":"bench","data":${JSON.stringify(f.data)}}`);
    } else if (f.type === 'ping') {
      ws.send(JSON.stringify({ type: 'pong', ref: f.ref }));
    } else if (f.ref !== undefined) {
      ws.send(JSON.stringify({ type: 'error', ref: f.ref, code: 'UNKNOWN_EVENT', message: 'unknown' }));
    }
  },
});

let sids = 0;
app.ws('/socket.io/*', {
  ...big,
  open: (ws) => {
    ws.sid = `sid${++sids}`;
    ws.alive = true;
    ws.send(`0{"sid":"${ws.sid}","upgrades":[],"pingInterval":${pingMs},"pingTimeout":20000,"maxPayload":1000000}`);
    ws.timer = setInterval(() => {
      if (!ws.alive) {
        ws.end(1000, 'ping timeout');
        return;
      }
      ws.alive = false;
      ws.send('2');
    }, pingMs);
  },
  close: (ws) => clearInterval(ws.timer),
  message: (ws, msg, isBinary) => {
    const text = dec.decode(msg);
    if (text === '3') {
      ws.alive = true;
    } else if (text === '40') {
      ws.send(`40{"sid":"${ws.sid}-io"}`);
    } else if (text.startsWith('42')) {
      const [event, arg] = JSON.parse(text.slice(2));
      if (event === 'join') ws.subscribe(arg);
      else if (event === 'bench:publish') app.publish('bench', `42["bench",${JSON.stringify(arg)}]`);
      else if (event === 'echo') ws.send(`42["echo",${JSON.stringify(arg)}]`);
    }
  },
});

app.listen('127.0.0.1', port, (ls) => {
  if (!ls) {
    console.error(`cannot listen on ${port}`);
    process.exit(1);
  }
  process.stdout.write(`READY ${uWS.us_socket_local_port(ls)}\n`);
});
process.once('SIGINT', () => process.exit(0));
process.once('SIGTERM', () => process.exit(0));
