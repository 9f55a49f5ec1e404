// Game-capacity peer: Bun.serve and its native (uWebSockets-based) WebSocket pub/sub, the
// same rules, Tachyon's wire protocol by hand.
import { createGame, envelope, handleTachyonFrame, matchmakeCookie, reportMetrics, upgradeGuest } from './game-common.mjs';
import { portFromEnv, ready } from './shared.mjs';

let server;
const game = createGame((roomCode, event, data) => server.publish(`race:${roomCode}`, envelope(roomCode, event, data)));

server = Bun.serve({
  port: portFromEnv(),
  hostname: '127.0.0.1',
  routes: {
    '/api/pvp/matchmake': (req) => {
      const cookie = matchmakeCookie(req.headers.get('cookie'));
      const body = { roomCode: game.matchmake(Date.now()) };
      return Response.json(body, cookie === undefined ? undefined : { headers: { 'set-cookie': cookie } });
    },
  },
  fetch(req, srv) {
    if (
      new URL(req.url).pathname === '/ws' &&
      srv.upgrade(req, { data: { guest: upgradeGuest(req.headers.get('cookie')), roomCode: null, playerId: 0 } })
    )
      return undefined;
    return new Response(null, { status: 404 });
  },
  websocket: {
    maxPayloadLength: 1024,
    idleTimeout: 120,
    perMessageDeflate: false,
    message(ws, message) {
      if (typeof message !== 'string') return;
      handleTachyonFrame(game, ws.data, message, { send: (t) => ws.send(t), subscribe: (topic) => ws.subscribe(topic) });
    },
    close(ws) {
      if (ws.data.roomCode !== null) game.leave(ws.data.roomCode, ws.data.playerId, Date.now());
    },
  },
});

reportMetrics();
ready(server.port);
