// The compact protocol (README, "Compact protocol"): room events held for a publish tick and
// sent as one frame per room, keystrokes as binary frames (code 1, then UTF-8), each answered
// at once by a binary acknowledgement [1, typingIndex u32 LE] when the tick is on (and by
// nothing without it). Real server, real @tachyon/client players, and a raw WebSocket that
// sees the frames as sent.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { ClientError } from '@tachyon/client';
import { silentLogger, type Server } from '@tachyon/server';
import { createGameApp, encodeAck, KEYSTROKES_CODE, type GameApp } from '../src/server/index.ts';
import { eventually, player, type TestPlayer } from './players.ts';

const PASSAGE = 'type me quick';
const TICK = 40;

const keystrokes = (text: string | Uint8Array): Uint8Array => {
  const bytes = typeof text === 'string' ? new TextEncoder().encode(text) : text;
  const frame = new Uint8Array(1 + bytes.length);
  frame[0] = KEYSTROKES_CODE;
  frame.set(bytes, 1);
  return frame;
};
/**
 * The binary acknowledgements a player received, in order: each one's typing index, and
 * whether the player had already seen its own progress update reach that index when it came
 * (frames of one socket arrive in the order sent: an acknowledgement sent at once comes first).
 */
function acks(p: TestPlayer): { index: number; afterUpdate: boolean }[] {
  const got: { index: number; afterUpdate: boolean }[] = [];
  p.live.onMessage((data) => {
    if (typeof data === 'string') return;
    const b = new Uint8Array(data);
    assert.equal(b.length, 5, `an acknowledgement is 5 bytes: ${[...b]}`);
    assert.equal(b[0], KEYSTROKES_CODE);
    const index = new DataView(data).getUint32(1, true);
    const afterUpdate = p.events.some(
      (e) => e.event === 'pvp:progress-update' && e.data.playerId === p.state.you && e.data.typingIndex >= index,
    );
    got.push({ index, afterUpdate });
  });
  return got;
}
const indexes = (a: { index: number }[]) => a.map((x) => x.index);
const last = (p: TestPlayer, event: string) => p.events.filter((e) => e.event === event).at(-1)?.data;
const phaseOf = (p: TestPlayer) => last(p, 'pvp:lobby-update')?.phase ?? p.state.phase;

/** A raw subscriber of a room's topic: every text frame as the server sent it. */
async function watcher(port: number, roomCode: string): Promise<{ frames: string[]; close(): void }> {
  const ws = new WebSocket(`ws://127.0.0.1:${port}/ws`);
  const frames: string[] = [];
  await new Promise((resolve, reject) => {
    ws.onopen = resolve;
    ws.onerror = reject;
  });
  ws.onmessage = (m) => frames.push(String(m.data));
  ws.send(JSON.stringify({ type: 'subscribe', topic: `race:${roomCode}`, ref: 1 }));
  await eventually(() => frames.some((f) => f.startsWith('{"type":"subscribed"')), 2000, 'subscribed');
  return { frames, close: () => ws.close() };
}

describe('typing race, compact protocol', () => {
  let game: GameApp;
  let server: Server;
  const open: { close(): void }[] = [];
  const track = <T extends { close(): void }>(x: T) => (open.push(x), x);
  before(async () => {
    game = createGameApp({
      cookieSecret: 'test-secret',
      config: { waitSeconds: 1, countdownSeconds: 1 },
      passages: [PASSAGE],
      publishTick: TICK,
      app: { logger: silentLogger },
    });
    server = await game.listen(0, '127.0.0.1');
  });
  after(async () => {
    for (const x of open) x.close();
    await server.close({ timeout: 1000 });
  });

  test('binary keystrokes count like the JSON event, and a tick sends them as one frame per room', async () => {
    const errors: ClientError[] = [];
    const ada = track(await player(server.port, 'Ada', (e) => errors.push(e as ClientError)));
    const adaAcks = acks(ada);
    const bob = track(await player(server.port, 'Bob'));
    const raw = track(await watcher(server.port, ada.roomCode));
    await eventually(() => phaseOf(ada) === 'racing' && phaseOf(bob) === 'racing', 5000, 'the race starts');

    raw.frames.length = 0;
    // Three frames sent back to back are handled well within one tick: one array frame.
    for (const k of ['t', 'yp', 'e']) assert.equal(ada.live.sendRaw(keystrokes(k)), true);
    // Each keystroke is acknowledged with its typing index, ahead of the tick's room update.
    await eventually(() => adaAcks.length === 3, 2000, 'three acknowledgements');
    assert.deepEqual(
      adaAcks,
      [1, 3, 4].map((index) => ({ index, afterUpdate: false })),
    );
    await eventually(() => last(bob, 'pvp:progress-update')?.typingIndex === 4, 2000, "bob sees ada's caret");
    // One frame per tick (a JSON array when it holds more than one event): the three land in
    // one tick, or two when a tick another room event started ends between them.
    const withProgress = raw.frames.filter((f) => f.includes('pvp:progress-update'));
    assert.ok(withProgress.length <= 2, `frames: ${JSON.stringify(raw.frames)}`);
    assert.ok(
      withProgress.some((f) => f.startsWith('[{"topic":')),
      'a batch frame',
    );
    const items = withProgress.flatMap((f) => [JSON.parse(f)].flat()).filter((e: any) => e.event === 'pvp:progress-update');
    assert.deepEqual(
      items.map((e: any) => [e.topic, e.data.playerId, e.data.typingIndex]),
      [1, 3, 4].map((i) => [`race:${ada.roomCode}`, ada.state.you, i]),
    );
    // No errors; the JSON request still answers in JSON (no acknowledgement bytes for it).
    assert.equal(errors.length, 0, JSON.stringify(errors));
    assert.deepEqual(await ada.live.request('pvp:keystrokes', ' '), { ok: true, typingIndex: 5 });

    // Bad input, each an error without ref (to onError), the room untouched.
    ada.live.sendRaw(keystrokes(new Uint8Array([0xff, 0xfe]))); // not UTF-8
    ada.live.sendRaw(keystrokes('seven!!')); // over the 6 characters of a batch
    ada.live.sendRaw(new Uint8Array([KEYSTROKES_CODE])); // no characters
    await eventually(() => errors.length === 3, 2000, 'three errors');
    assert.deepEqual(
      errors.map((e) => e.code),
      ['BAD_FRAME', 'VALIDATION', 'VALIDATION'],
    );
    assert.deepEqual(indexes(adaAcks), [1, 3, 4], 'refused keystrokes are not acknowledged');
    // The reply came at once; the room's event waits for the tick.
    await eventually(() => last(ada, 'pvp:progress-update')?.typingIndex === 5, 2000, 'the last progress');
    await new Promise((r) => setTimeout(r, 3 * TICK));
    assert.equal(last(ada, 'pvp:progress-update').typingIndex, 5, 'nothing more counted');
    ada.close();
    bob.close();
  });

  test('a binary keystroke the rules refuse comes back as an error without ref', async () => {
    const errors: ClientError[] = [];
    const ada = track(await player(server.port, 'Ada', (e) => errors.push(e as ClientError)));
    ada.live.sendRaw(keystrokes('t')); // alone in the room: still waiting
    await eventually(() => errors.length === 1, 2000, 'the refusal');
    assert.equal(errors[0]!.code, 'HANDLER_ERROR');
    assert.match(errors[0]!.message, /^NOT_RACING: /);
    ada.close();
  });
});

test('typing race without a publish tick: binary keystrokes get no acknowledgement (the room update answers at once)', async () => {
  const game = createGameApp({
    cookieSecret: 'test-secret',
    config: { waitSeconds: 1, countdownSeconds: 1 },
    passages: [PASSAGE],
    app: { logger: silentLogger },
  });
  const server = await game.listen(0, '127.0.0.1');
  const ada = await player(server.port, 'Ada');
  const adaAcks = acks(ada);
  const bob = await player(server.port, 'Bob');
  try {
    await eventually(() => phaseOf(ada) === 'racing' && phaseOf(bob) === 'racing', 5000, 'the race starts');
    ada.live.sendRaw(keystrokes('ty'));
    await eventually(() => last(ada, 'pvp:progress-update')?.typingIndex === 2, 2000, 'the progress update');
    // A ping after it: its answer comes after anything the keystroke could have caused.
    await ada.live.request('ping');
    assert.deepEqual(adaAcks, []);
  } finally {
    ada.close();
    bob.close();
    await server.close({ timeout: 1000 });
  }
});

test('the acknowledgement encodes the typing index as a u32 little-endian, all four bytes', () => {
  for (const typingIndex of [0, 1, 255, 256, 0x12345678, 0xffffffff]) {
    const bytes = encodeAck({ ok: true, typingIndex });
    assert.equal(bytes.length, 4);
    assert.equal(new DataView(bytes.buffer, bytes.byteOffset, 4).getUint32(0, true), typingIndex);
  }
});
