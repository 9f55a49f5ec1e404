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
