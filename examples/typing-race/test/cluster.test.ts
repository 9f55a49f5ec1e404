// The race on cluster() (test/cluster-server.ts: two worker threads, a real process): rooms
// belong to the worker that matchmade them, and players whose WebSocket landed on the other
// worker play through it (their input forwarded to the owner, the owner's publishes crossing
// back over the thread bus). Real sockets, @tachyon/client.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import http from 'node:http';
import { after, before, test } from 'node:test';
import { connect, type ClientError, type Live } from '@tachyon/client';
import type { GameState, RoomEvents } from '../src/game/index.ts';
import { eventually, sleep, type GameContract, type GameLive } from './players.ts';

const PASSAGE = 'type me quick';

interface Player {
  live: GameLive;
  /** The worker holding this player's WebSocket. */
  worker: number;
  roomCode: string;
  cookie: string;
  state: GameState;
  events: { event: keyof RoomEvents; data: any }[];
  statuses: string[];
}

let proc: ChildProcess;
let port: number;
const lines: any[] = [];
const open: Live<any, any>[] = [];

before(async () => {
  proc = spawn(process.execPath, [new URL('./cluster-server.ts', import.meta.url).pathname], {
    env: { ...process.env, WORKERS: '2' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no ready line:\n${lines.join('\n')}`)), 20_000);
    for (const stream of [proc.stdout!, proc.stderr!]) {
      let buffered = '';
      stream.setEncoding('utf8').on('data', (chunk: string) => {
        buffered += chunk;
        let nl: number;
        while ((nl = buffered.indexOf('\n')) !== -1) {
          const text = buffered.slice(0, nl);
          buffered = buffered.slice(nl + 1);
          let line: any = text;
          try {
            line = JSON.parse(text);
          } catch {}
          lines.push(line);
          if (line?.ready !== undefined) {
            clearTimeout(timer);
            resolve(line.ready);
          }
        }
      });
    }
    proc.once('exit', (code) => reject(new Error(`exited ${code}:\n${lines.map((l) => JSON.stringify(l)).join('\n')}`)));
  });
});
after(async () => {
  for (const live of open) live.close();
  const exited = new Promise((r) => proc.once('exit', (code, signal) => r({ code, signal })));
  proc.kill('SIGTERM');
  assert.deepEqual(await exited, { code: null, signal: 'SIGTERM' }, 'the cluster shut down cleanly');
});

/** GET on a fresh connection (the acceptor deals each connection to the next worker). */
function get(path: string, cookie?: string): Promise<{ status: number; body: any; setCookie?: string }> {
  return new Promise((resolve, reject) => {
    const req = http.get({ port, host: '127.0.0.1', path, agent: false, headers: cookie ? { cookie } : {} }, (res) => {
      let body = '';
      res
        .setEncoding('utf8')
        .on('data', (d) => (body += d))
        .on('end', () => {
          resolve({ status: res.statusCode!, body: JSON.parse(body), setCookie: res.headers['set-cookie']?.[0]?.split(';')[0] });
        });
    });
    req.on('error', reject);
  });
}

const ownerOf = (roomCode: string) => Number(roomCode.split('-')[0]);

/** Matchmakes (fresh connections) until worker `owner` answers, or any worker when undefined. */
async function matchmake(name: string, owner?: number, cookie?: string): Promise<{ roomCode: string; cookie: string }> {
  for (let i = 0; i < 20; i++) {
    const { status, body, setCookie } = await get(`/api/pvp/matchmake?name=${name}`, cookie);
    assert.equal(status, 200);
    assert.match(body.roomCode, /^[12]-[A-HJ-NP-Z2-9]{6}$/, 'a room code carries its worker');
    cookie = setCookie ?? cookie;
    if (owner === undefined || ownerOf(body.roomCode) === owner) return { roomCode: body.roomCode, cookie: cookie! };
  }
  throw new Error(`worker ${owner} never took the matchmake`);
}

function withCookie(cookie: string) {
  return class extends WebSocket {
    constructor(url: string | URL, protocols?: string | string[]) {
      super(url, { protocols, headers: { cookie } } as unknown as string[]);
    }
  };
}

/** A WebSocket that landed on worker `worker` (reconnecting until it does). */
async function socketOn(worker: number, cookie: string): Promise<{ live: GameLive; statuses: string[] }> {
  for (let i = 0; i < 20; i++) {
    const live = connect<GameContract>(`ws://127.0.0.1:${port}/ws`, {
      WebSocket: withCookie(cookie),
      onError: () => {},
      maxRetries: 0,
    });
    const statuses: string[] = [];
    live.onStatus((s) => statuses.push(s));
    const { worker: on } = await live.request('ping');
    if (on === worker) {
      open.push(live);
      return { live, statuses };
    }
    live.close();
  }
  throw new Error(`no WebSocket landed on worker ${worker}`);
}

/** Subscribes to the room and joins it over a socket on worker `on`. */
async function join(roomCode: string, cookie: string, on: number): Promise<Player> {
  const { live, statuses } = await socketOn(on, cookie);
  const events: Player['events'] = [];
  live.subscribe(`race:${roomCode}`, (event, data) => events.push({ event, data }));
  const state = await live.request('pvp:join', { roomCode });
  return { live, worker: on, roomCode, cookie, state, events, statuses };
}

const other = (worker: number) => (worker === 1 ? 2 : 1);
const last = (p: Player, event: string) => p.events.filter((e) => e.event === event).at(-1)?.data;
const phaseOf = (p: Player) => last(p, 'pvp:lobby-update')?.phase ?? p.state.phase;

async function rejects(p: Promise<unknown>, code: string, message?: RegExp): Promise<void> {
  await assert.rejects(p, (err: ClientError) => {
    assert.equal(err.code, code, err.message);
    if (message) assert.match(err.message, message);
    return true;
  });
}

async function raceToTheEnd(ada: Player, bob: Player): Promise<void> {
  await eventually(() => phaseOf(ada) === 'racing' && phaseOf(bob) === 'racing', 8000, 'the race starts on both screens');
  assert.deepEqual(await ada.live.request('pvp:keystrokes', 'type'), { ok: true, typingIndex: 4 });
  await eventually(() => last(bob, 'pvp:progress-update')?.typingIndex === 4, 3000, "bob sees ada's caret");
  assert.deepEqual(
    last(ada, 'pvp:progress-update'),
    { playerId: ada.state.you, typingIndex: 4, wrong: 0 },
    'the sender sees its own progress',
  );
  await bob.live.request('pvp:keystrokes', 'tyx');
  assert.deepEqual(await bob.live.request('pvp:backspace'), { ok: true, typingIndex: 2 });
  await eventually(
    () => last(ada, 'pvp:progress-update')?.playerId === bob.state.you && last(ada, 'pvp:progress-update')?.wrong === 0,
    3000,
    "ada sees bob's backspace",
  );
  for (const chunk of [' me qu', 'ick']) await ada.live.request('pvp:keystrokes', chunk);
  for (const chunk of ['pe me ', 'quick']) await bob.live.request('pvp:keystrokes', chunk);
  await eventually(
    () => last(ada, 'pvp:match-ended') !== undefined && last(bob, 'pvp:match-ended') !== undefined,
    3000,
    'match ended on both screens',
  );
  const seen = [last(ada, 'pvp:match-ended'), last(bob, 'pvp:match-ended')];
  assert.deepEqual(seen[0], seen[1], 'the same results for both');
  assert.deepEqual(
    seen[0].results.map((r: any) => [r.name, r.place, r.finished, r.typingIndex]),
    [
      ['Ada', 1, true, 13],
      ['Bob', 2, true, 13],
    ],
  );
}

for (const [label, adaRemote, bobRemote] of [
  ['both WebSockets on the other worker', true, true],
  ["one on the room's worker, one on the other", false, true],
] as const) {
  test(`two players race to the end across workers (${label}), each seeing the other's progress and the same results`, async () => {
    const a = await matchmake('Ada');
    const owner = ownerOf(a.roomCode);
    const b = await matchmake('Bob', owner); // rooms fill per worker: Bob's matchmake must land on the same one
    assert.equal(b.roomCode, a.roomCode);
    const ada = await join(a.roomCode, a.cookie, adaRemote ? other(owner) : owner);
    const bob = await join(b.roomCode, b.cookie, bobRemote ? other(owner) : owner);
    assert.equal(ada.state.passage, PASSAGE);
    assert.deepEqual(
      bob.state.players.map((p) => p.name),
      ['Ada', 'Bob'],
      "the owner's state came back through the forwarding worker",
    );
    await raceToTheEnd(ada, bob);
    ada.live.close();
    bob.live.close();
  });
}

test('a player reconnecting mid-race through another worker gets their seat and progress back', async () => {
  const a = await matchmake('Ada');
  const owner = ownerOf(a.roomCode);
  const b = await matchmake('Bob', owner);
  const ada = await join(a.roomCode, a.cookie, owner);
  const bob = await join(b.roomCode, b.cookie, other(owner));
  await eventually(() => phaseOf(ada) === 'racing' && phaseOf(bob) === 'racing', 8000, 'the race starts');
  await bob.live.request('pvp:keystrokes', 'type');
  bob.live.close();
  await eventually(
    () => last(ada, 'pvp:lobby-update')?.players.find((p: any) => p.name === 'Bob')?.connected === false,
    3000,
    "ada sees bob's disconnect",
  );
  // Back, through a socket on the other worker again (the leave was forwarded, now the join).
  const again = await join(b.roomCode, b.cookie, other(owner));
  assert.equal(again.state.you, bob.state.you, 'the same seat');
  assert.equal(again.state.players.find((p) => p.playerId === again.state.you)!.typingIndex, 4, 'the same progress');
  await eventually(
    () => last(ada, 'pvp:lobby-update')?.players.find((p: any) => p.name === 'Bob')?.connected === true,
    3000,
    'ada sees bob back',
  );
  assert.deepEqual(await again.live.request('pvp:keystrokes', ' me'), { ok: true, typingIndex: 7 });
  await eventually(() => last(ada, 'pvp:progress-update')?.typingIndex === 7, 3000, "ada sees bob's caret move on");
  ada.live.close();
  again.live.close();
});

test("bad input through a forwarding worker gets the game's clear error replies", async () => {
  const a = await matchmake('Ada');
  const owner = ownerOf(a.roomCode);
  const ada = await socketOn(other(owner), a.cookie);
  // Before joining: refused here, as in one process.
  await rejects(ada.live.request('pvp:keystrokes', 'type'), 'HANDLER_ERROR', /^NOT_JOINED/);
  // Rooms the owner does not have, rooms of workers that do not exist, codes that are not codes.
  const missing = `${owner}-ZZZZZZ`;
  await rejects(ada.live.request('pvp:join', { roomCode: missing }), 'HANDLER_ERROR', new RegExp(`^UNKNOWN_ROOM: No room ${missing}`));
  await rejects(ada.live.request('pvp:join', { roomCode: '7-ABCDEF' }), 'HANDLER_ERROR', /^UNKNOWN_ROOM: No room 7-ABCDEF/);
  await rejects(ada.live.request('pvp:join', { roomCode: '1-abc' }), 'VALIDATION');
  const denied = await new Promise<ClientError>((resolve) => ada.live.subscribe(`race:${missing}`, () => {}, { onDenied: resolve }));
  assert.equal(denied.code, 'DENIED', "the owner said the room's topic does not exist");
  // Joined through the forwarding worker, before the race: the owner's refusals come back.
  await ada.live.request('pvp:join', { roomCode: a.roomCode });
  await rejects(ada.live.request('pvp:keystrokes', 'type'), 'HANDLER_ERROR', /^NOT_RACING/);
  await rejects(ada.live.request('pvp:backspace'), 'HANDLER_ERROR', /^NOT_RACING/);
  await rejects(ada.live.request('pvp:keystrokes', 'toolong7'), 'VALIDATION');
  // Still fine afterwards.
  assert.equal((await ada.live.request('ping')).worker, other(owner));
  ada.live.close();
});

test("the owner worker crashing: its rooms' players get an error, the other worker's race goes on", async () => {
  // Room 1 on worker 1 with both players on worker 2; room 2 on worker 2, its players on worker 2.
  const r1a = await matchmake('Ada', 1);
  const r1b = await matchmake('Bob', 1);
  const r2a = await matchmake('Ada', 2);
  const r2b = await matchmake('Bob', 2);
  assert.equal(r1a.roomCode, r1b.roomCode);
  assert.equal(r2a.roomCode, r2b.roomCode);
  const lost = [await join(r1a.roomCode, r1a.cookie, 2), await join(r1b.roomCode, r1b.cookie, 2)] as const;
  const kept = [await join(r2a.roomCode, r2a.cookie, 2), await join(r2b.roomCode, r2b.cookie, 2)] as const;
  await eventually(() => [...lost, ...kept].every((p) => phaseOf(p) === 'racing'), 8000, 'both races start');
  await lost[0].live.request('pvp:keystrokes', 'ty');

  const mark = lines.length;
  for (let i = 0; i < 20; i++) if ((await get('/test/crash?worker=1')).status === 200) break;
  await eventually(
    () => lines.slice(mark).some((l) => /worker uncaught exception: replacing it/.test(l?.msg ?? '') && l.worker === 1),
    5000,
    'worker 1 replaced',
  );
  // The lost room's players: a clear error (the owner is restarting, or back without the room), never a hang.
  // Worker 1 runs on until the primary's abort reaches it, but answers no peer from its crash on.
  await rejects(lost[0].live.request('pvp:keystrokes', 'pe'), 'HANDLER_ERROR', /^(ROOM_UNAVAILABLE|UNKNOWN_ROOM)/);
  await sleep(400); // worker 1 is back (restartDelay 200 ms): the room is gone with it
  await rejects(lost[1].live.request('pvp:keystrokes', 'ty'), 'HANDLER_ERROR', /^(UNKNOWN_ROOM|ROOM_UNAVAILABLE)/);
  // The other race goes on to the end, on the same connections.
  await raceToTheEnd(kept[0], kept[1]);
  for (const p of [...lost, ...kept])
    assert.deepEqual(
      p.statuses.filter((s) => s !== 'open'),
      [],
      'no socket on worker 2 was dropped',
    );
  assert.ok(!lines.slice(mark).some((l) => /replacing it/.test(l?.msg ?? '') && l.worker === 2), 'worker 2 kept running');
  // And worker 1 serves races again.
  const fresh = await matchmake('Ada', 1);
  assert.match(fresh.roomCode, /^1-/);
  for (const p of [...lost, ...kept]) p.live.close();
});
