// packages/redis history.ts readBack: history entries as read back from Redis (the READ
// script's reply), built from the fuzzer's bytes the way the APPEND script stores them, from
// several servers whose clocks disagree. Properties: envelopes come out in offset order, each a
// JSON envelope that gives its offset back (append → read back); a read that says `recovered`
// holds every message after `since`, without a gap; `last` never returns more than asked.
import { FuzzedDataProvider } from '@jazzer.js/core';
import { readBack } from '../../packages/redis/src/history.ts';
import { offsetOf, positionedEnvelope } from '../../packages/server/src/realtime/history/envelope.ts';
import { assert, timed } from '../lib.mjs';

const EVENTS = ['move', 'chat', 'x'];

export function fuzz(data) {
  const p = new FuzzedDataProvider(data);
  const now = 1_000_000;
  const ttl = p.consumeBoolean() ? p.consumeIntegralInRange(1, 5000) : undefined;
  const count = p.consumeIntegralInRange(0, 40);
  const seq = p.consumeIntegralInRange(count, 1000);
  const epoch = 'AAAAAAAAAAA';
  const stream = [];
  for (let i = 0; i < count; i++) {
    const offset = seq - count + 1 + i;
    // Servers append with their own clocks: times may go backwards a little.
    const time = now - p.consumeIntegralInRange(0, 6000);
    const event = EVENTS[p.consumeIntegralInRange(0, EVENTS.length - 1)];
    const fields = ['t', String(time), 'e', event];
    if (p.consumeBoolean()) fields.push('d', JSON.stringify(p.consumeString(8)));
    stream.push([`${offset}-0`, fields]);
  }
  const useSince = p.consumeBoolean();
  const request = useSince
    ? { since: { offset: p.consumeIntegralInRange(0, seq + 2), epoch: p.consumeBoolean() ? epoch : 'BBBBBBBBBBB' } }
    : { last: p.consumeIntegralInRange(1, 50) };
  // What the script answers: entries after `since` (oldest first), or the `last` newest (newest first).
  const entries = useSince
    ? stream.filter(([id]) => Number(id.split('-')[0]) > request.since.offset)
    : stream.slice(Math.max(0, stream.length - request.last)).reverse();
  const read = timed('readBack', () => readBack('room', request, { size: 100, ttl }, [seq, epoch, entries], now));

  assert(read.offset === seq && read.epoch === epoch, 'the position is the stream’s');
  if (!useSince) assert(read.envelopes.length <= request.last, '`last` returns at most what was asked');
  let prev = -1;
  for (const env of read.envelopes) {
    const m = JSON.parse(env);
    assert(m.topic === 'room' && EVENTS.includes(m.event) && m.epoch === epoch, 'an envelope with its fields');
    assert(offsetOf(env) === m.offset && m.offset > prev, 'offsets in order');
    const stored = stream.find(([id]) => id === `${m.offset}-0`)[1];
    assert(env === positionedEnvelope('room', stored[3], stored[5], m.offset, epoch), 'append → read back');
    prev = m.offset;
  }
  if (useSince && read.recovered) {
    const offsets = read.envelopes.map((e) => offsetOf(e));
    const want = [];
    for (let o = request.since.offset + 1; o <= seq; o++) want.push(o);
    assert(offsets.join() === want.join(), `recovered without a gap: got ${offsets.join()} for ${want.join()}`);
  }
}
