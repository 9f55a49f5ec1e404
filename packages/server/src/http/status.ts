import { STATUS_CODES } from 'node:http';

// Status lines are built once: writeStatus gets the same string every time.
const lines: string[] = [];

export function statusText(status: number): string {
  return STATUS_CODES[status] ?? 'Unknown';
}

export function statusLine(status: number): string {
  let line = lines[status];
  if (line === undefined) {
    if (!Number.isInteger(status) || status < 100 || status > 999) throw new RangeError(`Invalid HTTP status ${status}`);
    line = lines[status] = `${status} ${statusText(status)}`;
  }
  return line;
}

const encoder = new TextEncoder();
const lineBytes: ArrayBuffer[] = [];

/**
 * The status line as bytes, for writeStatus: the addon copies a string argument to UTF-8 on
 * every call (V8's Utf8Length, then WriteUtf8 into a heap buffer), and reads an ArrayBuffer in
 * place. Made once per status.
 */
export function statusLineBytes(status: number): ArrayBuffer {
  return (lineBytes[status] ??= encoder.encode(statusLine(status)).buffer as ArrayBuffer);
}
