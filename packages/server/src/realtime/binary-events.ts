// Binary events (docs/protocol.md, "Binary events"): an event declared with `binary` in
// `app.ws(path, { events })` is also accepted as a binary frame `[code, ...payload]`, a byte
// instead of the `{"type":"event","event":"…","data":` prefix and no JSON to parse: the hot
// events of a game (keystrokes, inputs). Such a frame runs its event exactly as an event frame
// without `ref` would (rate limit, aroundEvent hooks, schema, handler), failures as error
// frames without `ref`; an event that declares `encode` answers it with a binary frame
// `[code, ...encode(reply)]` (the game's acknowledgement, in bytes: control.ts sends it). The
// codes are checked when the route is declared; a route without binary events has no table,
// and its binary frames pay one null check (route.ts).
import type { Logger } from '../core/logger.ts';
import { checkKnownKeys } from '../core/options-check.ts';
import { warnBadInput } from '../core/throttled-log.ts';
import { errorFrame } from './protocol.ts';
import type { Socket } from './socket.ts';

/**
 * `binary` of an event in its object form: its code, how its payload becomes the event's data,
 * and (optionally) how the handler's return value goes back as bytes. `Reply`: what the handler
 * returns (the event's `reply` schema's type).
 */
export interface BinaryEvent<Reply = unknown> {
  /** The frame's first byte: an integer from 1 to 255, unique on its route. */
  code: number;
  /**
   * Turns the bytes after the code into the event's data (then validated by its `schema`),
   * synchronously. `bytes` is a view of uWS's buffer, valid only during the call: copy what
   * must outlive it. A throw answers BAD_FRAME. Default: the bytes as UTF-8 text (invalid
   * UTF-8 answers BAD_FRAME).
   */
  decode?(bytes: Uint8Array): unknown;
  /**
   * Answers each binary frame of this event with a binary frame: the code, then the bytes this
   * returns for the handler's value (or resolved promise). Without it a binary frame has no
   * reply. Synchronous; a throw is the event's HANDLER_ERROR (an error frame without `ref`).
   * JSON event frames are answered as always (a JSON reply when they carry a `ref`). The
   * bytes are copied into the frame at once, so an encoder may return a buffer it reuses.
   */
  encode?(reply: Reply): Uint8Array;
}

/** How an event answers its binary frames: `[code, ...encode(reply)]`. */
export interface BinaryAnswer {
  readonly code: number;
  readonly encode: (reply: unknown) => Uint8Array;
}

interface DeclaredBinary {
  readonly name: string;
  readonly decode: (bytes: Uint8Array) => unknown;
  /** Null: its binary frames get no answer. */
  readonly answer: BinaryAnswer | null;
}

/** A route's binary events by code (index 0 is never used). */
export type BinaryTable = readonly (DeclaredBinary | undefined)[];

/** Runs a named event without `ref` (control.ts), answering it with `answer` when not null: rate limit already passed. */
export type RunEvent = (s: Socket<any>, name: string, data: unknown, answer: BinaryAnswer | null) => void;

/** Runs a binary frame's event and returns true, or returns false: not a declared code (the `message` hook's frame). */
export type BinaryHandler = (s: Socket<any>, ab: ArrayBuffer) => boolean;

const utf8 = new TextDecoder('utf-8', { fatal: true });
const decodeText = (bytes: Uint8Array): string => utf8.decode(bytes);

/** Payloads up to this length that are all ASCII are decoded in JavaScript. */
const SHORT_TEXT = 32;

/**
 * The default decode of a frame's payload (the bytes after the code): a short ASCII payload (a
 * game's keystrokes: a few characters) by String.fromCharCode, which costs less than the view
 * and the native call TextDecoder needs; anything else through the fatal UTF-8 decoder.
 */
function decodeTextAfterCode(bytes: Uint8Array): string {
  const n = bytes.length;
  if (n - 1 <= SHORT_TEXT) {
    let text = '';
    let i = 1;
    for (; i < n; i++) {
      const b = bytes[i]!;
      if (b >= 0x80) break;
      text += String.fromCharCode(b);
    }
    if (i === n) return text;
  }
  return utf8.decode(bytes.subarray(1));
}

/**
 * Checks the `binary` of each event when the route is declared: the table of codes, or null
 * when no event declares one.
 */
export function checkBinaryEvents(path: string, events: Record<string, unknown>, fail: (msg: string) => never): BinaryTable | null {
  let table: (DeclaredBinary | undefined)[] | null = null;
  for (const [name, def] of Object.entries(events)) {
    const binary = (def as { binary?: unknown }).binary;
    if (binary === undefined) continue;
    const where = `event ${name}: binary`;
    let code: unknown = binary;
    let decode: unknown;
    let encode: unknown;
    if (typeof binary === 'object' && binary !== null) {
      checkKnownKeys(`ws ${path}: ${where}`, binary, ['code', 'decode', 'encode']);
      ({ code, decode, encode } = binary as { code?: unknown; decode?: unknown; encode?: unknown });
      if (decode !== undefined && typeof decode !== 'function') fail(`${where}.decode must be a function (bytes: Uint8Array) => data`);
      if (encode !== undefined && typeof encode !== 'function') fail(`${where}.encode must be a function (reply) => Uint8Array`);
    } else if (typeof binary !== 'number') fail(`${where} must be a code (an integer from 1 to 255) or { code, decode, encode }`);
    if (typeof code !== 'number' || !Number.isInteger(code) || code < 1 || code > 255)
      fail(`${where} code must be an integer from 1 to 255, got ${String(code)}`);
    table ??= new Array(256).fill(undefined);
    const taken = table[code as number];
    if (taken !== undefined) fail(`${where} code ${String(code)} is already the code of event ${taken.name}`);
    table[code as number] = {
      name,
      decode: (decode as DeclaredBinary['decode'] | undefined) ?? decodeText,
      answer: encode === undefined ? null : { code: code as number, encode: encode as BinaryAnswer['encode'] },
    };
  }
  return table;
}

/** The name of the event a binary frame is for, or undefined (the rate limiter's refusal: route.ts). */
export function binaryEventName(table: BinaryTable, ab: ArrayBuffer): string | undefined {
  return ab.byteLength === 0 ? undefined : table[new Uint8Array(ab, 0, 1)[0]!]?.name;
}

/** Compiled once per route that declares binary events (route.ts). */
export function compileBinaryEvents(table: BinaryTable, run: RunEvent, log: Logger): BinaryHandler {
  return (s, ab) => {
    if (ab.byteLength === 0) return false;
    const bytes = new Uint8Array(ab);
    const ev = table[bytes[0]!];
    if (ev === undefined) return false;
    let data: unknown;
    try {
      data = ev.decode === decodeText ? decodeTextAfterCode(bytes) : ev.decode(bytes.subarray(1));
    } catch (err) {
      warnBadInput(log, { ip: s.ip, event: ev.name, size: ab.byteLength, err }, 'websocket binary event could not be decoded');
      s.sendRaw(errorFrame(undefined, 'BAD_FRAME', `Binary event ${JSON.stringify(ev.name)}: its payload could not be decoded`), false);
      return true;
    }
    run(s, ev.name, data, ev.answer);
    return true;
  };
}
