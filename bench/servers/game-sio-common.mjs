// The typing race on Socket.IO, for both Socket.IO peers (on ws and on uWebSockets.js): the
// same rules; a room is a Socket.IO room; events with acknowledgements for replies.
import { Server } from 'socket.io';
import { createGame, isGameError, reportMetrics, ROOM_CODE, upgradeGuest } from './game-common.mjs';

const refused = (e) => ({ error: `${e.code}: ${e.message}` });

export function gameIo(attach) {
  const io = new Server({ transports: ['websocket'], serveClient: false, maxHttpBufferSize: 1024, perMessageDeflate: false });
  attach(io);
  const game = createGame((roomCode, event, data) => io.to(roomCode).emit(event, data));
  io.on('connection', (socket) => {
    const s = { guest: upgradeGuest(socket.handshake.headers.cookie), roomCode: null, playerId: 0 };
    const answer = (ack, r) => {
      if (typeof ack === 'function') ack(isGameError(r) ? refused(r) : r);
    };
    socket.on('pvp:join', (data, ack) => {
      const code = data?.roomCode;
      if (typeof code !== 'string' || !ROOM_CODE.test(code)) return answer(ack, { ok: false, code: 'VALIDATION', message: 'roomCode' });
      const now = Date.now();
      if (s.roomCode !== null && s.roomCode !== code) {
        socket.leave(s.roomCode);
        game.leave(s.roomCode, s.playerId, now);
      }
      const state = game.join(code, s.guest, now);
      if (!isGameError(state)) {
        s.roomCode = code;
        s.playerId = state.you;
        socket.join(code);
      }
      answer(ack, state);
    });
    socket.on('pvp:keystrokes', (text, ack) => {
      if (typeof text !== 'string' || text.length < 1 || text.length > 6)
        return answer(ack, { ok: false, code: 'VALIDATION', message: 'batch' });
      if (s.roomCode === null) return answer(ack, { ok: false, code: 'NOT_JOINED', message: 'Join a room first' });
      answer(ack, game.keystrokes(s.roomCode, s.playerId, text, Date.now()));
    });
    socket.on('pvp:backspace', (ack) => {
      if (s.roomCode === null) return answer(ack, { ok: false, code: 'NOT_JOINED', message: 'Join a room first' });
      answer(ack, game.backspace(s.roomCode, s.playerId, Date.now()));
    });
    socket.on('ping', (ack) => answer(ack, { now: Date.now() }));
    socket.on('disconnect', () => {
      if (s.roomCode !== null) game.leave(s.roomCode, s.playerId, Date.now());
    });
  });
  reportMetrics();
  return game;
}
