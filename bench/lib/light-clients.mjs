// Light protocol clients for the benchmarks that measure one server feature from a Node load
// process (bench/sse-fanout.mjs, bench/ws-request.mjs). They do the least a client can: a raw
// WebSocket over node:net (frames parsed by hand, writes batched per read), and an SSE reader
// over node:http that counts events instead of parsing them. @tachyon/client (undici's
// WebSocket, JSON.parse of every frame, a promise per request) costs the load core more than
// the server spends per message, so with it the load process, not the server, would set the
// rate.
import http from 'node:http';
import net from 'node:net';

const HANDSHAKE_TIMEOUT_MS = 5000;
/** A client close frame, code 1000 (masked with the zero key, as textFrames). */
const CLOSE_FRAME = Buffer.from([0x88, 0x82, 0, 0, 0, 0, 0x03, 0xe8]);

/**
 * A client frame: FIN + text, masked with the all-zero key (RFC 6455 requires the mask bit;
 * a zero key leaves the payload as it is, so no XOR pass). `texts` go out in one write.
 */
export function textFrames(texts) {
  let size = 0;
  for (const t of texts) {
    const n = Buffer.byteLength(t);
    size += n + (n < 126 ? 6 : n < 65536 ? 8 : 14);
  }
  const out = Buffer.allocUnsafe(size);
  let at = 0;
  for (const t of texts) {
    const n = Buffer.byteLength(t);
    out[at++] = 0x81;
    if (n < 126) out[at++] = 0x80 | n;
    else if (n < 65536) {
      out[at++] = 0x80 | 126;
      out.writeUInt16BE(n, at);
      at += 2;
    } else {
      out[at++] = 0x80 | 127;
      out.writeBigUInt64BE(BigInt(n), at);
      at += 8;
    }
    out.writeUInt32BE(0, at); // the mask key
    at += 4;
    at += out.write(t, at, 'utf8');
  }
  return out;
}

/**
 * Opens a WebSocket to ws://127.0.0.1:<port><path>. `onFrame(payload)` gets each server text
 * frame's payload (a Buffer valid during the call); `onClose(reason)` once, when the
 * connection ends. Resolves with { send(text), sendAll(texts), close(), socket }; close() sends a
 * close frame (a cut connection would make the server log a protocol violation per socket).
 */
export function rawWebSocket(port, path, onFrame, onClose = () => {}) {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host: '127.0.0.1', port, noDelay: true });
    const timer = setTimeout(
      () => socket.destroy(new Error(`no WebSocket handshake answer within ${HANDSHAKE_TIMEOUT_MS} ms`)),
      HANDSHAKE_TIMEOUT_MS,
    );
    let head = '';
    let rest = null; // bytes of an incomplete frame
    let open = false;
    let closed = false;
    const end = (reason) => {
      if (closed) return;
      closed = true;
      clearTimeout(timer);
      if (!open) reject(new Error(`WebSocket to ${path} failed: ${reason}`));
      else onClose(reason);
    };
    const frames = (chunk) => {
      const buf = rest === null ? chunk : Buffer.concat([rest, chunk]);
      rest = null;
      let at = 0;
      while (buf.length - at >= 2) {
        const opcode = buf[at] & 0x0f;
        let len = buf[at + 1] & 0x7f;
        let start = at + 2;
        if (len === 126) {
          if (buf.length - at < 4) break;
          len = buf.readUInt16BE(at + 2);
          start = at + 4;
        } else if (len === 127) {
          if (buf.length - at < 10) break;
          len = Number(buf.readBigUInt64BE(at + 2));
          start = at + 10;
        }
        if (buf.length < start + len) break;
        if (opcode === 1) onFrame(buf.subarray(start, start + len));
        else if (opcode === 8) {
          const code = len >= 2 ? buf.readUInt16BE(start) : 1005;
          socket.end();
          end(`close frame ${code} ${buf.toString('utf8', start + 2, start + len)}`);
          return;
        }
        at = start + len;
      }
      if (at < buf.length) rest = buf.subarray(at);
    };
    socket.on('data', (chunk) => {
      if (open) return frames(chunk);
      head += chunk.toString('latin1');
      const cut = head.indexOf('\r\n\r\n');
      if (cut === -1) return;
      if (!head.startsWith('HTTP/1.1 101')) return socket.destroy(new Error(`handshake answered ${head.split('\r\n')[0]}`));
      open = true;
      clearTimeout(timer);
      const after = Buffer.from(head.slice(cut + 4), 'latin1');
      resolve({
        socket,
        send: (text) => socket.write(textFrames([text])),
        sendAll: (texts) => texts.length > 0 && socket.write(textFrames(texts)),
        close: () => socket.end(CLOSE_FRAME), // the server answers it and ends the connection
      });
      if (after.length) frames(after);
    });
    socket.on('error', (err) => end(err.message));
    socket.on('close', () => end('connection closed'));
    socket.write(
      `GET ${path} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
        'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n',
    );
  });
}

/**
 * Opens a fallback-transport session (docs/protocol.md, "Fallback transport"): GET <path> as
 * an event stream. `onText(text)` gets the stream's decoded body as it arrives (latin1: the
 * counting needs no UTF-8 decoding). Resolves with { session, post(frames), close() } once the
 * `session` event arrived.
 */
export function sseSession(port, path, onText, onClose = () => {}) {
  return new Promise((resolve, reject) => {
    let settled = false;
    const req = http.get(
      { host: '127.0.0.1', port, path, agent: false, headers: { accept: 'text/event-stream' }, timeout: HANDSHAKE_TIMEOUT_MS },
      (res) => {
        if (res.statusCode !== 200) {
          res.resume();
          return reject(new Error(`SSE GET ${path} answered ${res.statusCode}`));
        }
        req.setTimeout(0);
        res.socket.setNoDelay(true);
        res.setEncoding('latin1');
        let head = '';
        res.on('data', (text) => {
          if (settled) return onText(text);
          head += text;
          const m = /^event: session\ndata: (.*)\n\n/.exec(head);
          if (m === null) return;
          settled = true;
          const { session } = JSON.parse(m[1]);
          resolve({ session, post: (frames) => ssePost(port, `${path}?session=${session}`, frames), close: () => req.destroy() });
          const after = head.slice(m[0].length);
          if (after) onText(after);
        });
        res.on('close', () => onClose('stream ended'));
      },
    );
    req.on('timeout', () => req.destroy(new Error(`SSE GET ${path}: no answer within ${HANDSHAKE_TIMEOUT_MS} ms`)));
    req.on('error', (err) => (settled ? onClose(err.message) : reject(err)));
  });
}

/** POSTs protocol frames (one per line) to a session; resolves on 204, rejects otherwise. */
export function ssePost(port, path, frames) {
  const body = frames.join('\n');
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: '127.0.0.1',
        port,
        path,
        method: 'POST',
        agent: false,
        headers: { 'content-type': 'text/plain', 'content-length': Buffer.byteLength(body) },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8').on('data', (d) => (text += d));
        res.on('end', () => (res.statusCode === 204 ? resolve() : reject(new Error(`POST ${path} answered ${res.statusCode} ${text}`))));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** Counts `needle` in a stream of text pieces, including occurrences cut across two pieces. */
export function occurrenceCounter(needle) {
  let carry = '';
  return (text) => {
    const s = carry === '' ? text : carry + text;
    let n = 0;
    let next = 0; // where the next occurrence may start (after the last one counted)
    for (let at = s.indexOf(needle); at !== -1; at = s.indexOf(needle, next)) {
      n++;
      next = at + needle.length;
    }
    carry = s.slice(Math.max(next, s.length - needle.length + 1));
    return n;
  };
}
