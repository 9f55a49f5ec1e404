// Socket.IO 4.8 on its default WebSocket engine (ws, on node:http), websocket transport only.
import http from 'node:http';
import { Server } from 'socket.io';
import { SIO_OPTIONS, wire } from './sio-common.mjs';
import { portFromEnv, ready } from './shared.mjs';

const port = portFromEnv();
const server = http.createServer();
const io = new Server(server, SIO_OPTIONS);
wire(io);

server.listen(port, '127.0.0.1', () => ready(server.address().port));
server.on('error', (err) => {
  console.error(`socketio: failed to listen on 127.0.0.1:${port}: ${err.message}`);
  process.exit(1);
});
