// The vocabulary of a response's state machine (response-core.ts), apart from the class so
// that the class's file holds only the machine: the states, the deadline markers, the op codes
// of corked writes, and the types a response shares with the lifecycle (Body, Stringify, what
// it needs from its request). Plain numbers, not an enum: every check stays a small-integer
// comparison that V8 inlines.

/** The chain's promise when every step ran synchronously (chain.ts returns it): nothing is pending. */
export const SETTLED: Promise<void> = Promise.resolve();

// Typed `number` so that TypeScript does not narrow `_state` across awaits.
export const OPEN: number = 0;
export const SENDING: number = 1; // the body is being compressed off-thread: no more writes, still abortable
export const STREAMING: number = 2;
export const DONE: number = 3;
export const ABORTED: number = 4;
/** `_deadline` markers: the framework ended the response itself (late writes are not bugs). */
export const TIMED_OUT = -1;
export const SHUT_DOWN = -2;

/** Misuse (answering twice) throws here and is logged in production: see `_late`. */
export const DEVELOPMENT = process.env.NODE_ENV !== 'production';

export type Body = string | Uint8Array | ArrayBuffer;

/**
 * What a response needs from its request (Request implements it). Declared here so that the
 * response modules do not import request.ts, which imports them. @internal
 */
export interface ResponseRequest {
  readonly method: string;
  readonly route: string;
  header(name: string): string | undefined;
  readonly signal: AbortSignal;
  /** Aborts `req.signal` (if anyone asked for it) with `reason`. */
  _abortSignal(reason: Error): void;
}

/** Writes `value`, the reply for `status`, as JSON text (a route's compiled serializer: http/serializer.ts). */
export type Stringify = (value: unknown, status: number) => string | undefined;

export const OP_END = 0;
export const OP_BEGIN = 1;
export const OP_WRITE = 2;
export const OP_END_STREAM = 3;
export const OP_TRY_END = 4; // a chunk of a body whose total length is known
export const OP_END_HEAD = 5; // HEAD answer for a streamed body: headers, length if known
