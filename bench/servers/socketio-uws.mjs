// Socket.IO 4.8 on uWebSockets.js (`io.attachApp`, the same uWS binary as Tachyon),
// websocket transport only.
import { Server } from 'socket.io';
import uWS from 'uWebSockets.js';
import { SIO_OPTIONS, wire } from './sio-common.mjs';
import { portFromEnv, ready } from './shared.mjs';

const port = portFromEnv();
const app = uWS.App();
const io = new Server(SIO_OPTIONS);
io.attachApp(app);
wire(io);

app.listen('127.0.0.1', port, (listenSocket) => {
  if (!listenSocket) {
    console.error(`socketio-uws: failed to listen on 127.0.0.1:${port}`);
    process.exit(1);
  }
  ready(uWS.us_socket_local_port(listenSocket));
});
