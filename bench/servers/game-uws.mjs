// Game-capacity peer: raw uWebSockets.js written by hand (the ceiling): the same rules, and
// Tachyon's wire protocol parsed with JSON.parse, published with uWS topics.
import uWS from 'uWebSockets.js';
import { createGame, envelope, handleTachyonFrame, matchmakeCookie, reportMetrics, upgradeGuest } from './game-common.mjs';
import { portFromEnv, ready } from './shared.mjs';

const app = uWS.App();
const game = createGame((roomCode, event, data) => app.publish(`race:${roomCode}`, envelope(roomCode, event, data)));
const decoder = new TextDecoder();

app.get('/api/pvp/matchmake', (res, req) => {
  const cookie = matchmakeCookie(req.getHeader('cookie'));
  res.writeHeader('content-type', 'application/json');
  if (cookie !== undefined) res.writeHeader('set-cookie', cookie);
  res.end(JSON.stringify({ roomCode: game.matchmake(Date.now()) }));
});

app.ws('/ws', {
  maxPayloadLength: 1024,
  idleTimeout: 120,
  upgrade(res, req, context) {
    res.upgrade(
      { s: { guest: upgradeGuest(req.getHeader('cookie')), roomCode: null, playerId: 0 } },
      req.getHeader('sec-websocket-key'),
      req.getHeader('sec-websocket-protocol'),
      req.getHeader('sec-websocket-extensions'),
      context,
    );
  },
  message(ws, message, isBinary) {
    if (isBinary) return;
    handleTachyonFrame(game, ws.getUserData().s, decoder.decode(message), {
      send: (t) => ws.send(t, false),
      subscribe: (topic) => ws.subscribe(topic),
    });
  },
  close(ws) {
    const s = ws.getUserData().s;
    if (s.roomCode !== null) game.leave(s.roomCode, s.playerId, Date.now());
  },
});

reportMetrics();
app.listen('127.0.0.1', portFromEnv(), (listenSocket) => {
  if (!listenSocket) {
    console.error('game-uws: failed to listen');
    process.exit(1);
  }
  ready(uWS.us_socket_local_port(listenSocket));
});
