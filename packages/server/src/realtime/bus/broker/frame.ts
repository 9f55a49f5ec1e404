// The bytes a broker bus puts on the wire (docs/protocol.md, "Bus frames"): an 11-byte
// header, then the message exactly as local subscribers got it. The header says who sent
// it (so a server drops its own message when the broker echoes it back) and whether it is
// a text or binary WebSocket message. The topic is not inside: the channel names it.
import { isUtf8 } from 'node:buffer';

export const FRAME_MAGIC = 0x54; // 'T'
export const FRAME_VERSION = 1;
export const HEADER_BYTES = 11;
export const ORIGIN_BYTES = 8;
/**
 * The first 6 bytes of an origin name the process: the worker threads of one cluster() process
 * share them (each adds its worker id), so a worker drops what its siblings published (they
 * already delivered it through the in-process mesh). A lone server's 8 bytes are all random.
 */
export const PROCESS_BYTES = 6;

export const FrameKind = { Text: 0, Binary: 1, Presence: 2 } as const;
export type FrameKind = (typeof FrameKind)[keyof typeof FrameKind];

/** A random id for one bus instance (one process, or one worker with its own connection). */
export function newOrigin(): Buffer {
  const origin = Buffer.allocUnsafe(ORIGIN_BYTES);
  globalThis.crypto.getRandomValues(origin);
  return origin;
}

/** The frame for one message: a single allocation, the payload copied once. */
export function encodeFrame(origin: Buffer, kind: FrameKind, message: string | Uint8Array | ArrayBuffer): Buffer {
  let frame: Buffer;
  if (typeof message === 'string') {
    frame = Buffer.allocUnsafe(HEADER_BYTES + Buffer.byteLength(message));
    frame.write(message, HEADER_BYTES);
  } else {
    const bytes = message instanceof Uint8Array ? message : new Uint8Array(message);
    frame = Buffer.allocUnsafe(HEADER_BYTES + bytes.byteLength);
    frame.set(bytes, HEADER_BYTES);
  }
  frame[0] = FRAME_MAGIC;
  frame[1] = FRAME_VERSION;
  frame[2] = kind;
  origin.copy(frame, 3);
  return frame;
}

/** Why a frame was refused, or null when it is sound. Never throws. */
export function checkFrame(frame: Uint8Array, maxPayload: number): string | null {
  if (!(frame instanceof Uint8Array)) return 'not bytes';
  if (frame.byteLength < HEADER_BYTES) return 'shorter than the header';
  if (frame[0] !== FRAME_MAGIC) return 'not a Tachyon bus frame';
  if (frame[1] !== FRAME_VERSION) return `unknown frame version ${frame[1]}`;
  const kind = frame[2];
  if (kind !== FrameKind.Text && kind !== FrameKind.Binary && kind !== FrameKind.Presence) return `unknown frame kind ${kind}`;
  if (frame.byteLength - HEADER_BYTES > maxPayload)
    return `payload over maxMessageSize (${frame.byteLength - HEADER_BYTES} > ${maxPayload} bytes)`;
  // A text message goes out to browsers as a text frame: it must be valid UTF-8.
  if (kind !== FrameKind.Binary && !isUtf8(frame.subarray(HEADER_BYTES))) return 'text payload is not valid UTF-8';
  return null;
}

/** True when the frame was sent by `origin` (the broker echoed our own message back), comparing its first `bytes`. */
export function sentBy(frame: Uint8Array, origin: Buffer, bytes: number = ORIGIN_BYTES): boolean {
  for (let i = 0; i < bytes; i++) if (frame[3 + i] !== origin[i]) return false;
  return true;
}

/** The origin of a frame as hex (presence bookkeeping, logs). */
export function originOf(frame: Uint8Array): string {
  return Buffer.from(frame.buffer, frame.byteOffset + 3, ORIGIN_BYTES).toString('hex');
}
