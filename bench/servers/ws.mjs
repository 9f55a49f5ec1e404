// ws 8 peer: the usual Node.js WebSocket server, on node:http, no compression.
//   /echo    every message back with the same binary flag
//   /fanout  every connection joins the topic; every message received goes to every member
//            (the sender too), the way ws's documentation broadcasts: a loop over the clients
import http from 'node:http';
import { WebSocketServer } from 'ws';
import { portFromEnv, ready, WS_MAX_PAYLOAD } from './shared.mjs';

const port = portFromEnv();
const server = http.createServer((req, res) => {
  res.writeHead(404).end();
});
const wss = new WebSocketServer({ server, maxPayload: WS_MAX_PAYLOAD, perMessageDeflate: false, clientTracking: false });
const members = new Set();

wss.on('connection', (ws, req) => {
  if (req.url === '/echo') {
    ws.on('message', (data, isBinary) => ws.send(data, { binary: isBinary }));
  } else if (req.url === '/fanout') {
    members.add(ws);
    ws.on('close', () => members.delete(ws));
    ws.on('message', (data, isBinary) => {
      for (const m of members) if (m.readyState === 1) m.send(data, { binary: isBinary });
    });
  } else {
    ws.close(1008, 'unknown path');
  }
  ws.on('error', () => {});
});

server.listen(port, '127.0.0.1', () => ready(server.address().port));
server.on('error', (err) => {
  console.error(`ws: failed to listen on 127.0.0.1:${port}: ${err.message}`);
  process.exit(1);
});
