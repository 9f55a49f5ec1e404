import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Game, TokenBucket, Typing, gameConfig, isGameError, longPassage, wordsPerMinute, type GameState } from '../src/game/index.ts';
import { run, testGame } from './helpers.ts';

const ada = { id: 'g-ada', name: 'Ada' };
const bob = { id: 'g-bob', name: 'Bob' };

function state(r: unknown): GameState {
  assert.ok(!isGameError(r), `expected a state, got ${JSON.stringify(r)}`);
  return r as GameState;
}

/** Two players matched and raced to the start at t = 5000 (2 s wait + 3 s 3-2-1). */
function racing(config = {}, passages?: string[]) {
  const t = testGame(config, passages);
  const code = t.game.matchmake(0);
  assert.equal(t.game.matchmake(0), code, 'the second player goes to the same room');
  const a = state(t.game.join(code, ada, 0));
  const b = state(t.game.join(code, bob, 0));
  run(t.game, 0, 5000);
  assert.equal(t.game.room(code)!.phase, 'racing');
  return { ...t, code, a: a.you, b: b.you };
}

describe('typing', () => {
  test('checks each character against the passage; a mistake must be backspaced', () => {
    const t = new Typing('abc def', 3);
    assert.deepEqual(t.type('ab'), { accepted: 2, finished: false });
    assert.equal(t.typingIndex, 2);
    t.type('x'); // wrong
    assert.deepEqual([t.typingIndex, t.wrong, t.errors], [2, 1, 1]);
    t.type('c'); // right letter, but after a mistake: still wrong
    assert.deepEqual([t.typingIndex, t.wrong, t.errors], [2, 2, 2]);
    assert.equal(t.backspace(), true);
    assert.equal(t.backspace(), true);
    assert.equal(t.wrong, 0);
    t.type('c def');
    assert.equal(t.finished, true);
    assert.equal(t.typed, 2 + 2 + 5);
    assert.equal(t.accuracy, 7 / 9);
  });

  test('keeps at most maxWrong wrong characters and stops at the end of the passage', () => {
    const t = new Typing('ab', 2);
    assert.deepEqual(t.type('xyzw'), { accepted: 2, finished: false });
    assert.equal(t.wrong, 2);
    t.backspace();
    t.backspace();
    assert.deepEqual(t.type('abab'), { accepted: 2, finished: true });
    assert.equal(t.typingIndex, 2);
  });

  test('backspace steps back over correct text, not past the start', () => {
    const t = new Typing('ab', 2);
    assert.equal(t.backspace(), false);
    t.type('a');
    assert.equal(t.backspace(), true);
    assert.equal(t.typingIndex, 0);
    assert.equal(t.accuracy, 1);
  });

  test('WPM: five characters a word', () => {
    assert.equal(wordsPerMinute(300, 60_000), 60);
    assert.equal(wordsPerMinute(25, 5_000), 60);
    assert.equal(wordsPerMinute(10, 0), 0);
  });
});

describe('flood limit', () => {
  test('a token bucket refuses past its burst and refills at its rate', () => {
    const b = new TokenBucket(10, 3, 0);
    assert.deepEqual([b.take(0), b.take(0), b.take(0), b.take(0)], [true, true, true, false]);
    assert.equal(b.take(50), false);
    assert.equal(b.take(100), true);
    assert.equal(b.take(100), false);
  });
});

describe('config', () => {
  test('refuses values that would break the rules', () => {
    assert.throws(() => gameConfig({ maxPlayers: 0 }), /maxPlayers/);
    assert.throws(() => gameConfig({ waitSeconds: Number.NaN }), /waitSeconds/);
    assert.throws(() => gameConfig({ minPlayers: 7 }), /minPlayers/);
    assert.throws(() => new Game({ publish: () => {}, passages: [] }), /no passages/);
  });
});

describe('rooms', () => {
  test('matchmaking fills a room up to 6 players, then opens another', () => {
    const { game } = testGame();
    const codes = Array.from({ length: 7 }, () => game.matchmake(0));
    assert.equal(new Set(codes.slice(0, 6)).size, 1);
    assert.notEqual(codes[6], codes[0]);
    assert.match(codes[0]!, /^[A-HJ-NP-Z2-9]{6}$/);
  });

  test('waiting → starting (wait countdown) → countdown (3-2-1) → racing, with a countdown event each second', () => {
    const { game, events } = testGame();
    const code = game.matchmake(0);
    const a = state(game.join(code, ada, 0));
    assert.equal(a.phase, 'waiting');
    assert.equal(a.passage, 'hello world');
    assert.equal(a.you, 1);
    const b = state(game.join(code, bob, 1000));
    assert.equal(b.phase, 'starting');
    assert.equal(b.secondsLeft, 2);
    assert.equal(b.players.length, 2);
    run(game, 1000, 6000);
    assert.equal(game.room(code)!.phase, 'racing');
    assert.deepEqual(
      events('pvp:countdown').map((c) => `${c.phase} ${c.secondsLeft}`),
      ['starting 2', 'starting 1', 'countdown 3', 'countdown 2', 'countdown 1'],
    );
    assert.deepEqual(
      events('pvp:lobby-update').map((l) => l.phase),
      ['waiting', 'starting', 'countdown', 'racing'],
    );
  });

  test('a full room skips the wait; a seventh player is refused', () => {
    const { game } = testGame();
    const code = game.matchmake(0);
    for (let i = 0; i < 5; i++) game.matchmake(0);
    for (let i = 0; i < 6; i++) state(game.join(code, { id: `g${i}`, name: `P${i}` }, 0));
    assert.equal(game.room(code)!.phase, 'countdown');
    const r = game.join(code, { id: 'late', name: 'Late' }, 0);
    assert.equal(isGameError(r) && r.code, 'RACE_STARTED');
  });

  test('matchmade seats are held until they expire', () => {
    const { game } = testGame({ maxPlayers: 2, reservationMs: 1000 });
    const first = game.matchmake(0);
    assert.equal(game.matchmake(0), first);
    assert.notEqual(game.matchmake(500), first, 'both seats held: a new room');
    assert.equal(game.matchmake(1000), first, 'the holds expired');
  });

  test('late join during the wait countdown; a leave before the 3-2-1 frees the seat and may stop the countdown', () => {
    const { game, events } = testGame();
    const code = game.matchmake(0);
    state(game.join(code, ada, 0));
    const b = state(game.join(code, bob, 0));
    const c = state(game.join(code, { id: 'g-cy', name: 'Cy' }, 1500));
    assert.equal(c.phase, 'starting');
    assert.equal(c.players.length, 3);
    game.leave(code, c.you, 1600);
    game.leave(code, b.you, 1700);
    assert.equal(game.room(code)!.phase, 'waiting');
    assert.equal(events('pvp:lobby-update').at(-1).players.length, 1);
    run(game, 1700, 9000);
    assert.equal(game.room(code)!.phase, 'waiting');
  });

  test('empty rooms are collected; unknown rooms are refused', () => {
    const { game } = testGame({ reservationMs: 1000 });
    const code = game.matchmake(0);
    game.tick(500);
    assert.equal(game.roomCount, 1, 'kept while the seat is reserved');
    game.tick(1000);
    assert.equal(game.roomCount, 0);
    const r = game.join(code, ada, 1000);
    assert.equal(isGameError(r) && r.code, 'UNKNOWN_ROOM');
    assert.equal((game.keystrokes('NOROOM', 1, 'a', 0) as any).code, 'UNKNOWN_ROOM');
    assert.equal((game.backspace('NOROOM', 1, 0) as any).code, 'UNKNOWN_ROOM');
  });
});

describe('racing', () => {
  test('every accepted keystroke publishes progress; the end publishes results with WPM, accuracy and place', () => {
    const { game, code, a, b, events } = racing();
    assert.deepEqual(game.keystrokes(code, a, 'hello ', 5000), { ok: true, typingIndex: 6 });
    assert.deepEqual(events('pvp:progress-update').at(-1), { playerId: a, typingIndex: 6, wrong: 0 });
    game.keystrokes(code, b, 'hex', 5100);
    assert.deepEqual(events('pvp:progress-update').at(-1), { playerId: b, typingIndex: 2, wrong: 1 });
    game.backspace(code, b, 5200);
    assert.deepEqual(events('pvp:progress-update').at(-1), { playerId: b, typingIndex: 2, wrong: 0 });
    run(game, 5100, 6000);
    const wpm = events('pvp:wpm-update');
    assert.equal(wpm.length, 1);
    assert.equal(wpm[0].players.find((p: any) => p.playerId === a).wpm, 72); // 6 chars in 1 s
    game.keystrokes(code, a, 'world', 11_000); // 11 chars in 6 s → 22 WPM
    assert.equal(game.room(code)!.phase, 'racing', 'waits for the other player');
    game.keystrokes(code, b, 'llo wo', 15_000);
    game.keystrokes(code, b, 'rld', 15_000);
    assert.equal(game.room(code)!.phase, 'ended');
    const [ended] = events('pvp:match-ended');
    assert.deepEqual(ended.results, [
      { playerId: a, name: 'Ada', place: 1, wpm: 22, accuracy: 100, finished: true, typingIndex: 11 },
      { playerId: b, name: 'Bob', place: 2, wpm: 13.2, accuracy: 91.7, finished: true, typingIndex: 11 },
    ]);
  });

  test('bad input never changes a room: before the start, after the end, oversized or empty batches, unjoined players, finished players', () => {
    const t = testGame();
    const code = t.game.matchmake(0);
    const a = state(t.game.join(code, ada, 0)).you;
    assert.equal((t.game.keystrokes(code, a, 'h', 0) as any).code, 'NOT_RACING');
    assert.equal((t.game.backspace(code, a, 0) as any).code, 'NOT_RACING');
    state(t.game.join(code, bob, 0));
    run(t.game, 0, 5000);
    const before = t.published.length;
    assert.equal((t.game.keystrokes(code, a, 'hello w', 5000) as any).code, 'BAD_BATCH');
    assert.equal((t.game.keystrokes(code, a, '', 5000) as any).code, 'BAD_BATCH');
    assert.equal((t.game.keystrokes(code, 99, 'h', 5000) as any).code, 'NOT_JOINED');
    assert.equal(t.published.length, before, 'nothing published');
    assert.equal(t.game.room(code)!.state(a, 5000).players[0]!.typingIndex, 0);
    t.game.keystrokes(code, a, 'hello ', 5000);
    t.game.keystrokes(code, a, 'world', 5000);
    assert.equal((t.game.keystrokes(code, a, 'x', 5000) as any).code, 'FINISHED');
    t.game.leave(code, 2, 5000);
    run(t.game, 5000, 5000 + 31_000);
    assert.equal(t.game.room(code)?.phase ?? 'ended', 'ended');
  });

  test('after the end keystrokes are refused with NOT_RACING', () => {
    const { game, code, a } = racing({ maxRaceSeconds: 2 });
    run(game, 5000, 7000);
    assert.equal(game.room(code)!.phase, 'ended');
    assert.equal((game.keystrokes(code, a, 'h', 7000) as any).code, 'NOT_RACING');
  });

  test('the time limit ends the race; unfinished players are placed by progress', () => {
    const { game, code, a, b, events } = racing({ maxRaceSeconds: 10 });
    game.keystrokes(code, b, 'hel', 6000);
    game.keystrokes(code, a, 'h', 6000);
    run(game, 5000, 15_000);
    const [ended] = events('pvp:match-ended');
    assert.deepEqual(
      ended.results.map((r: any) => [r.playerId, r.place, r.finished]),
      [
        [b, 1, false],
        [a, 2, false],
      ],
    );
  });

  test('a flood from one player is limited without touching the others', () => {
    const { game, code, a, b } = racing({ floodRate: 10, floodBurst: 5 }, [longPassage(500)]);
    const passage = game.room(code)!.passage;
    let typed = 0;
    const codes = Array.from({ length: 8 }, () => {
      const r = game.keystrokes(code, a, passage[typed]!, 5000);
      if (!isGameError(r)) typed++;
      return isGameError(r) ? r.code : 'ok';
    });
    assert.deepEqual(codes, ['ok', 'ok', 'ok', 'ok', 'ok', 'RATE_LIMITED', 'RATE_LIMITED', 'RATE_LIMITED']);
    assert.equal(game.room(code)!.state(a, 5000).players[0]!.typingIndex, 5, 'refused keystrokes did not count');
    assert.deepEqual(game.keystrokes(code, b, 'T', 5000), { ok: true, typingIndex: 1 });
    assert.deepEqual(game.keystrokes(code, a, passage[5]!, 5100), { ok: true, typingIndex: 6 });
  });

  test('a player who reconnects mid-race gets their seat and progress back; a race with everyone gone is collected', () => {
    const { game, code, a, b, events } = racing({ reconnectGraceMs: 5000 }, [longPassage(100)]);
    game.keystrokes(code, a, 'The li', 5000);
    game.leave(code, a, 5500);
    assert.equal(
      events('pvp:lobby-update')
        .at(-1)
        .players.find((p: any) => p.playerId === a).connected,
      false,
    );
    const back = state(game.join(code, ada, 6000));
    assert.equal(back.you, a);
    assert.equal(back.phase, 'racing');
    assert.equal(back.players.find((p) => p.playerId === a)!.typingIndex, 6);
    assert.equal(back.raceElapsedMs, 1000);
    assert.deepEqual(game.keystrokes(code, a, 'g', 6000), { ok: true, typingIndex: 7 });
    // A stranger cannot take a seat mid-race.
    assert.equal((game.join(code, { id: 'x', name: 'X' }, 6000) as any).code, 'RACE_STARTED');
    game.leave(code, a, 7000);
    game.leave(code, b, 7000);
    run(game, 7000, 11_900);
    assert.equal(game.roomCount, 1, 'kept during the grace time');
    assert.equal(game.room(code)!.phase, 'racing');
    run(game, 12_000, 12_000);
    assert.equal(game.roomCount, 0);
  });

  test('a racer who leaves for good does not hold the race: it ends when the others finish', () => {
    const { game, code, a, b, events } = racing({ reconnectGraceMs: 1000 });
    game.leave(code, b, 5000);
    game.keystrokes(code, a, 'hello ', 5500);
    game.keystrokes(code, a, 'world', 5600);
    assert.equal(game.room(code)!.phase, 'racing', 'b may still come back');
    run(game, 5600, 6100);
    assert.equal(events('pvp:match-ended').length, 1);
  });
});
