// Bus frames (realtime/bus/broker/frame.ts, presence/wire.ts, history/envelope.ts): encode →
// check holds for every message; checkFrame and readAnnouncement never throw and refuse with a
// reason; an accepted frame is within maxMessageSize; positioned envelopes give their offset back.
import { checkFrame, encodeFrame, FrameKind, HEADER_BYTES } from '../../packages/server/src/realtime/bus/broker/frame.ts';
import { META_FLAG, metaJson, payloadStart, readMeta } from '../../packages/server/src/realtime/bus/broker/frame.ts';
import { originOf, sentBy } from '../../packages/server/src/realtime/bus/broker/frame.ts';
import { offsetOf, positionedEnvelope, positionFrame } from '../../packages/server/src/realtime/history/envelope.ts';
import { readAnnouncement } from '../../packages/server/src/realtime/presence/wire.ts';
import { isValidEventName, isValidTopic, topicEnvelope as topicEnvelopeOf } from '../../packages/server/src/realtime/protocol.ts';
import { assert, timed } from '../lib.mjs';

const MAX = 1024;
const ORIGIN = Buffer.from('0123456789abcdef', 'hex');

export function fuzz(data) {
  // Any bytes as a frame from the broker.
  const reason = timed('checkFrame', () => checkFrame(data, MAX));
  if (reason === null) {
    const start = payloadStart(data);
    assert(data.length >= start && data.length - start <= MAX, 'an accepted frame is within its cap');
    assert(typeof originOf(data) === 'string' && typeof sentBy(data, ORIGIN) === 'boolean', 'origin readable');
    if ((data[2] & META_FLAG) !== 0) {
      const meta = timed('readMeta', () => readMeta(data));
      assert(typeof meta === 'string' || Object.values(meta).every((v) => typeof v === 'string'), 'metadata or a reason');
    }
  } else assert(typeof reason === 'string' && reason.length > 0, 'a reason');

  // Encode → check: what we send, we accept (binary always; text when it is well-formed UTF-8).
  const payload = data.subarray(Math.min(1, data.length));
  const binary = encodeFrame(ORIGIN, FrameKind.Binary, payload);
  assert(checkFrame(binary, MAX) === (payload.length > MAX ? checkFrame(binary, MAX) : null), 'a binary frame round-trips');
  if (payload.length <= MAX) {
    assert(Buffer.compare(binary.subarray(HEADER_BYTES), payload) === 0, 'the payload comes back as sent');
    assert(sentBy(binary, ORIGIN), 'our own origin is recognised');
    const text = payload.toString('utf8');
    const textFrame = encodeFrame(ORIGIN, FrameKind.Text, text);
    if (textFrame.length - HEADER_BYTES <= MAX) {
      assert(checkFrame(textFrame, MAX) === null, 'a text frame round-trips');
      assert(textFrame.subarray(HEADER_BYTES).toString('utf8') === text, 'the text comes back as sent');
    }
  }

  // With metadata: encode → check → read gives the metadata and the payload back.
  if (payload.length <= MAX) {
    const meta = { traceparent: data.toString('latin1', 0, Math.min(64, data.length)) };
    const json = metaJson(meta);
    const framed = encodeFrame(ORIGIN, FrameKind.Binary, payload, json);
    assert(checkFrame(framed, MAX) === null, 'a frame with metadata round-trips');
    assert(JSON.stringify(readMeta(framed)) === JSON.stringify(meta), 'the metadata comes back as sent');
    assert(Buffer.compare(framed.subarray(payloadStart(framed)), payload) === 0, 'the payload after the metadata comes back');
  }

  // Presence announcements: an object of a known kind, or a reason; never a throw.
  const a = timed('readAnnouncement', () => readAnnouncement(data));
  assert(typeof a === 'string' || (typeof a === 'object' && a !== null && a.v === 1), 'an announcement or a reason');
  const s = timed('readAnnouncement(string)', () => readAnnouncement(data.toString('latin1')));
  assert(typeof s === 'string' || (typeof s === 'object' && s !== null), 'an announcement or a reason');

  // History envelopes as read back: the offset comes back; a raw message gives -1 or a number.
  const raw = data.toString('utf8');
  const o = timed('offsetOf', () => offsetOf(raw));
  assert(o === -1 || Number.isSafeInteger(o), 'offsetOf answers an integer');
  const parts = raw.split('\n');
  const topic = parts[0] ?? '';
  const event = parts[1] ?? '';
  if (isValidTopic(topic) && isValidEventName(event)) {
    const offset = data.length * 7919;
    const json = parts.length > 2 ? JSON.stringify(parts.slice(2).join('\n')) : undefined;
    const env = positionedEnvelope(topic, event, json, offset, 'AAAAAAAAAAA');
    assert(offsetOf(env) === offset, 'positionedEnvelope → offsetOf');
    const back = JSON.parse(env);
    assert(back.topic === topic && back.event === event && back.offset === offset, 'the envelope is JSON with its fields');
    // What the publishing socket is sent instead: the position alone, as JSON.
    const pos = JSON.parse(positionFrame(topic, env));
    assert(pos.topic === topic && pos.offset === offset && pos.epoch === 'AAAAAAAAAAA' && !('event' in pos), 'positionFrame');
    assert(positionFrame(topic, topicEnvelopeOf(topic, event, json)) === null, 'no position, no frame');
  }
}
