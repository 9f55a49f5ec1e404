// The anchor for cross-server fan-out: Socket.IO 4.8 with @socket.io/redis-adapter (classic
// pub/sub), the setup Socket.IO documents for several servers. REDIS_URL=redis://…
import http from 'node:http';
import { Server } from 'socket.io';
import { createAdapter } from '@socket.io/redis-adapter';
import { createClient } from 'redis';
import { SIO_OPTIONS, wire } from './sio-common.mjs';
import { portFromEnv, ready } from './shared.mjs';

const pub = createClient({ url: process.env.REDIS_URL });
const sub = pub.duplicate();
await Promise.all([pub.connect(), sub.connect()]);
const server = http.createServer();
const io = new Server(server, { ...SIO_OPTIONS, adapter: createAdapter(pub, sub) });
wire(io);
server.listen(portFromEnv(), '127.0.0.1', () => ready(server.address().port));
