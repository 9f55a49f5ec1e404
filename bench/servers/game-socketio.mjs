// Game-capacity peer: Socket.IO 4.8 on its default engine (ws on node:http), as in the seed.
import http from 'node:http';
import { matchmakeCookie } from './game-common.mjs';
import { gameIo } from './game-sio-common.mjs';
import { portFromEnv, ready } from './shared.mjs';

let game;
const server = http.createServer((req, res) => {
  if (req.method === 'GET' && req.url.startsWith('/api/pvp/matchmake')) {
    const cookie = matchmakeCookie(req.headers.cookie);
    const headers =
      cookie === undefined ? { 'content-type': 'application/json' } : { 'content-type': 'application/json', 'set-cookie': cookie };
    res.writeHead(200, headers).end(JSON.stringify({ roomCode: game.matchmake(Date.now()) }));
  } else res.writeHead(404).end();
});
game = gameIo((io) => io.attach(server));
server.listen(portFromEnv(), '127.0.0.1', () => ready(server.address().port));
