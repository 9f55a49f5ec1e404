// Game-capacity peer: Socket.IO 4.8 on uWebSockets.js (io.attachApp), the seed's winner.
import uWS from 'uWebSockets.js';
import { matchmakeCookie } from './game-common.mjs';
import { gameIo } from './game-sio-common.mjs';
import { portFromEnv, ready } from './shared.mjs';

const app = uWS.App();
const game = gameIo((io) => io.attachApp(app));
app.get('/api/pvp/matchmake', (res, req) => {
  const cookie = matchmakeCookie(req.getHeader('cookie'));
  res.writeHeader('content-type', 'application/json');
  if (cookie !== undefined) res.writeHeader('set-cookie', cookie);
  res.end(JSON.stringify({ roomCode: game.matchmake(Date.now()) }));
});
app.listen('127.0.0.1', portFromEnv(), (listenSocket) => {
  if (!listenSocket) {
    console.error('game-socketio-uws: failed to listen');
    process.exit(1);
  }
  ready(uWS.us_socket_local_port(listenSocket));
});
