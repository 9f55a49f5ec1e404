// The Socket.IO handlers both Socket.IO peers use (the loadgen's socketio protocol):
//   "join" <topic>           socket.join(topic)
//   "bench:publish" <data>   io.to("bench").emit("bench", data): every member, the sender too
//   "echo" <data>            socket.emit("echo", data)
import { TOPIC, WS_MAX_PAYLOAD } from './shared.mjs';

export const SIO_OPTIONS = { transports: ['websocket'], serveClient: false, maxHttpBufferSize: WS_MAX_PAYLOAD, perMessageDeflate: false };

export function wire(io) {
  io.on('connection', (socket) => {
    socket.on('join', (topic) => {
      if (typeof topic === 'string') socket.join(topic);
    });
    socket.on('bench:publish', (data) => {
      io.to(TOPIC).emit('bench', data);
    });
    socket.on('echo', (data) => {
      socket.emit('echo', data);
    });
  });
}
