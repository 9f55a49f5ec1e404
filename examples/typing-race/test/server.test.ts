import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { connect, type ClientError } from '@tachyon/client';
import { silentLogger, type Server } from '@tachyon/server';
import { createGameApp, type GameApp } from '../src/server/index.ts';
import { eventually, joinAs, matchmake, player, sleep, type TestPlayer } from './players.ts';

const PASSAGE = 'type me quick';

async function start(config = {}) {
  const game = createGameApp({
    cookieSecret: 'test-secret',
    config: { waitSeconds: 1, countdownSeconds: 1, ...config },
    passages: [PASSAGE],
    app: { logger: silentLogger },
  });
  const server = await game.listen(0, '127.0.0.1');
  return { game, server, port: server.port };
}

const last = (p: TestPlayer, event: string) => p.events.filter((e) => e.event === event).at(-1)?.data;
const phaseOf = (p: TestPlayer) => last(p, 'pvp:lobby-update')?.phase ?? p.state.phase;

async function rejects(p: Promise<unknown>, code: string, message?: RegExp): Promise<void> {
  await assert.rejects(p, (err: ClientError) => {
    assert.equal(err.code, code, err.message);
    if (message) assert.match(err.message, message);
    return true;
  });
}

describe('typing race server', () => {
  let s: { game: GameApp; server: Server; port: number };
  const open: TestPlayer[] = [];
  before(async () => {
    s = await start();
  });
  after(async () => {
    for (const p of open) p.close();
    await s.server.close({ timeout: 1000 });
  });
  const track = (p: TestPlayer) => (open.push(p), p);

  test('two players match, count down, race to the end and get the results', async () => {
    const ada = track(await player(s.port, 'Ada'));
    const bob = track(await player(s.port, 'Bob'));
    assert.equal(bob.roomCode, ada.roomCode);
    assert.equal(ada.state.passage, PASSAGE);
    assert.equal(ada.state.you, 1);
    assert.equal(bob.state.you, 2);
    assert.deepEqual(
      bob.state.players.map((p) => p.name),
      ['Ada', 'Bob'],
    );
    await eventually(() => phaseOf(ada) === 'racing' && phaseOf(bob) === 'racing', 5000, 'the race starts');
    const countdowns = ada.events.filter((e) => e.event === 'pvp:countdown').map((e) => `${e.data.phase} ${e.data.secondsLeft}`);
    assert.deepEqual(countdowns, ['starting 1', 'countdown 1']);

    // Every accepted keystroke is published to the room, the sender included.
    assert.deepEqual(await ada.live.request('pvp:keystrokes', 'type'), { ok: true, typingIndex: 4 });
    await eventually(() => last(bob, 'pvp:progress-update')?.typingIndex === 4, 2000, "bob sees ada's caret");
    assert.deepEqual(last(ada, 'pvp:progress-update'), { playerId: 1, typingIndex: 4, wrong: 0 });
    await bob.live.request('pvp:keystrokes', 'tyx');
    await bob.live.request('pvp:backspace');
    await eventually(
      () => last(ada, 'pvp:progress-update')?.playerId === 2 && last(ada, 'pvp:progress-update')?.wrong === 0,
      2000,
      'backspace published',
    );
    await eventually(() => last(ada, 'pvp:wpm-update') !== undefined, 2500, 'a WPM update within a second');

    for (const chunk of [' me qu', 'ick']) await ada.live.request('pvp:keystrokes', chunk);
    for (const chunk of ['pe me ', 'quick']) await bob.live.request('pvp:keystrokes', chunk);
    await eventually(() => last(ada, 'pvp:match-ended') !== undefined && last(bob, 'pvp:match-ended') !== undefined, 2000, 'match ended');
    const { results } = last(bob, 'pvp:match-ended');
    assert.deepEqual(
      results.map((r: any) => [r.name, r.place, r.finished, r.typingIndex]),
      [
        ['Ada', 1, true, 13],
        ['Bob', 2, true, 13],
      ],
    );
    assert.equal(results[0].accuracy, 100);
    assert.equal(results[1].accuracy, 92.9); // 13 right of 14 typed
    assert.ok(results[0].wpm > 0);
    await rejects(ada.live.request('pvp:keystrokes', 'x'), 'HANDLER_ERROR', /^NOT_RACING: /);
    ada.close();
    bob.close();
  });

  test('a player who reconnects mid-race gets the state back', async () => {
    const ada = track(await player(s.port, 'Ada'));
    const bob = track(await player(s.port, 'Bob'));
    await eventually(() => phaseOf(bob) === 'racing', 5000, 'the race starts');
    await ada.live.request('pvp:keystrokes', 'type m');
    ada.close();
    await eventually(
      () => last(bob, 'pvp:lobby-update')?.players.find((p: any) => p.playerId === ada.state.you)?.connected === false,
      2000,
      'bob sees ada leave',
    );
    const back = track(await joinAs(s.port, ada.roomCode, ada.cookie));
    assert.equal(back.state.you, ada.state.you);
    assert.equal(back.state.phase, 'racing');
    assert.equal(back.state.players.find((p) => p.playerId === ada.state.you)!.typingIndex, 6);
    assert.ok(back.state.raceElapsedMs! >= 0);
    assert.deepEqual(await back.live.request('pvp:keystrokes', 'e'), { ok: true, typingIndex: 7 });
    await eventually(() => last(bob, 'pvp:progress-update')?.typingIndex === 7, 2000, 'bob sees the reconnected caret');
    back.close();
    bob.close();
  });

  test('bad input gets a clear error reply and never corrupts the room', async () => {
    const stranger = connect(`ws://127.0.0.1:${s.port}/ws`, { onError: () => {} });
    await rejects(stranger.request('pvp:keystrokes', 'a'), 'HANDLER_ERROR', /^NOT_JOINED: /);
    await rejects(stranger.request('pvp:backspace'), 'HANDLER_ERROR', /^NOT_JOINED: /);
    await rejects(stranger.request('pvp:join', { roomCode: 'ZZZZZZ' }), 'HANDLER_ERROR', /^UNKNOWN_ROOM: /);
    await rejects(stranger.request('pvp:join', { roomCode: 'nope' }), 'VALIDATION');
    await rejects(stranger.request('pvp:join'), 'VALIDATION');
    await rejects(stranger.request('pvp:nope' as 'ping'), 'UNKNOWN_EVENT');
    let denied: ClientError | undefined;
    stranger.subscribe('race:ZZZZZZ', () => {}, { onDenied: (e) => (denied = e) });
    await eventually(() => denied !== undefined, 2000, 'unknown room topic denied');
    assert.ok(typeof (await stranger.ping()) === 'number');
    assert.ok(((await stranger.request('ping')) as { now: number }).now > 0);

    const ada = track(await player(s.port, 'Ada'));
    await rejects(ada.live.request('pvp:keystrokes', 't'), 'HANDLER_ERROR', /^NOT_RACING: The race has not started/);
    const bob = track(await player(s.port, 'Bob'));
    await eventually(() => phaseOf(ada) === 'racing', 5000, 'the race starts');
    await rejects(ada.live.request('pvp:keystrokes', 'type me'), 'VALIDATION');
    await rejects(ada.live.request('pvp:keystrokes', ''), 'VALIDATION');
    await rejects(ada.live.request('pvp:keystrokes', 5 as unknown as string), 'VALIDATION');
    await rejects(ada.live.request('pvp:backspace', 'x' as never), 'VALIDATION');
    // Nothing above moved a caret.
    const again = await ada.live.request('pvp:join', { roomCode: ada.roomCode });
    assert.deepEqual(
      again.players.map((p) => p.typingIndex),
      [0, 0],
    );
    assert.equal(
      ada.events.some((e) => e.event === 'pvp:progress-update'),
      false,
    );
    stranger.close();
    ada.close();
    bob.close();
  });

  test('a flood from one socket is limited; the others play on', async () => {
    const t = await start({ floodRate: 1, floodBurst: 5 }); // 1 token a second: no refill during the burst
    try {
      const ada = await player(t.port, 'Ada');
      const bob = await player(t.port, 'Bob');
      await eventually(() => phaseOf(ada) === 'racing', 5000, 'the race starts');
      const replies = await Promise.allSettled(Array.from({ length: 12 }, () => ada.live.request('pvp:keystrokes', 'x')));
      const limited = replies.filter((r) => r.status === 'rejected' && /^RATE_LIMITED: /.test((r.reason as Error).message));
      assert.equal(replies.filter((r) => r.status === 'fulfilled').length, 5);
      assert.equal(limited.length, 7);
      assert.deepEqual(await bob.live.request('pvp:keystrokes', 't'), { ok: true, typingIndex: 1 });
      ada.close();
      bob.close();
    } finally {
      await t.server.close({ timeout: 1000 });
    }
  });

  test('matchmaking: six players a room, a name kept in a signed cookie, bad names refused', async () => {
    const t = await start({ waitSeconds: 60 });
    try {
      const seats = await Promise.all(Array.from({ length: 7 }, (_, i) => matchmake(t.port, `P${i}`)));
      assert.equal(new Set(seats.slice(0, 6).map((s) => s.roomCode)).size, 1);
      assert.notEqual(seats[6]!.roomCode, seats[0]!.roomCode);
      const me = await fetch(`http://127.0.0.1:${t.port}/api/pvp/me`, { headers: { cookie: seats[0]!.cookie } });
      assert.deepEqual(await me.json(), { name: 'P0' });
      const tampered = seats[0]!.cookie.replace('P0', 'P9');
      assert.equal((await fetch(`http://127.0.0.1:${t.port}/api/pvp/me`, { headers: { cookie: tampered } })).status, 404);
      assert.equal((await fetch(`http://127.0.0.1:${t.port}/api/pvp/matchmake?name=${encodeURIComponent('<script>')}`)).status, 400);
      assert.equal((await fetch(`http://127.0.0.1:${t.port}/api/pvp/matchmake?name=${'x'.repeat(21)}`)).status, 400);
      // A tampered cookie is a new guest on the WebSocket too (not P0's seat).
      const p = await joinAs(t.port, seats[0]!.roomCode, tampered);
      const real = await joinAs(t.port, seats[0]!.roomCode, seats[0]!.cookie);
      assert.notEqual(p.state.you, real.state.you);
      assert.equal(real.state.players.find((x) => x.playerId === real.state.you)!.name, 'P0');
      p.close();
      real.close();
      await sleep(50);
    } finally {
      await t.server.close({ timeout: 1000 });
    }
  });
});
