// The parts of the Autobahn runner that run without Python: the echo server the fuzzing client
// talks to (a real process, a real WebSocket client) and the summary of reports/index.json.
// The suite itself runs by hand: `npm run conformance:autobahn` (docs/security.md).
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { compactCases, formatSummary, summarize, verdict } from './autobahn-summary.mjs';

const here = dirname(fileURLToPath(import.meta.url));

let server;
let port;
before(async () => {
  server = spawn(process.execPath, [join(here, 'autobahn-server.mjs')], { stdio: ['ignore', 'pipe', 'inherit'] });
  port = await new Promise((resolve, reject) => {
    let out = '';
    server.on('exit', (code) => reject(new Error(`autobahn-server exited ${code}: ${out}`)));
    server.stdout.on('data', (c) => {
      out += c;
      const m = /READY (\d+)/.exec(out);
      if (m) resolve(Number(m[1]));
    });
  });
});
after(() => server?.kill('SIGTERM'));

/** Opens a socket on `path`, sends each message, resolves with what came back (and how it closed). */
function exchange(path, messages, { expect = messages.length } = {}) {
  const ws = new WebSocket(`ws://127.0.0.1:${port}${path}`);
  ws.binaryType = 'arraybuffer';
  const got = [];
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`timed out with ${got.length} of ${expect} messages`)), 30_000);
    ws.onerror = () => {}; // the close event says how it ended
    ws.onopen = () => {
      for (const m of messages) ws.send(m);
    };
    ws.onmessage = (e) => {
      got.push(e.data);
      if (got.length === expect) ws.close(1000);
    };
    ws.onclose = (e) => {
      clearTimeout(timer);
      resolve({ got, code: e.code, extensions: ws.extensions });
    };
  });
}

const bytes = (n, seed) => Uint8Array.from({ length: n }, (_, i) => (i * 31 + seed) & 0xff);

for (const path of ['/echo', '/echo-deflate']) {
  test(`${path} echoes text and binary messages unchanged, 8 MiB ones included`, async () => {
    const big = bytes(8 << 20, 7);
    const text = `héllo ☃ ${'x'.repeat(70_000)}`; // over the default 64 KiB maxPayloadLength
    const { got, code, extensions } = await exchange(path, ['hi', text, bytes(10, 1), big, '{"type":"not json']);
    assert.equal(code, 1000);
    assert.equal(got[0], 'hi');
    assert.equal(got[1], text);
    assert.deepEqual(new Uint8Array(got[2]), bytes(10, 1));
    assert.equal(got[3].byteLength, big.byteLength);
    assert.ok(Buffer.from(got[3]).equals(big), 'the 8 MiB message came back byte for byte');
    // A text frame with the protocol's prefix is Tachyon's: not echoed but answered (BAD_FRAME).
    // Autobahn's payloads never start with it.
    assert.match(got[4], /"type":"error"/);
    assert.equal(extensions.includes('permessage-deflate'), path === '/echo-deflate', `extensions: ${extensions}`);
  });
}

test('a message over 16 MiB closes the socket with 1009, the server stays up', async () => {
  const { got, code } = await exchange('/echo', [bytes((16 << 20) + 1, 3)], { expect: 1 });
  assert.equal(code, 1009);
  assert.equal(got.length, 0);
  const again = await exchange('/echo', ['still here']);
  assert.deepEqual(again.got, ['still here']);
});

test('a verdict is the worse of the message and close behaviours; unknown ones count as FAILED', () => {
  assert.equal(verdict({ behavior: 'OK', behaviorClose: 'OK' }), 'OK');
  assert.equal(verdict({ behavior: 'NON-STRICT', behaviorClose: 'OK' }), 'NON-STRICT');
  assert.equal(verdict({ behavior: 'OK', behaviorClose: 'INFORMATIONAL' }), 'INFORMATIONAL');
  assert.equal(verdict({ behavior: 'OK', behaviorClose: 'WRONG CODE' }), 'FAILED');
  assert.equal(verdict({ behavior: 'UNIMPLEMENTED' }), 'UNIMPLEMENTED');
});

test('summarize counts each agent, sorts case ids numerically and lists what was not OK', () => {
  const s = summarize({
    plain: {
      '1.1.1': { behavior: 'OK', behaviorClose: 'OK' },
      '12.1.1': { behavior: 'UNIMPLEMENTED', behaviorClose: 'UNIMPLEMENTED' },
      '6.4.2': { behavior: 'NON-STRICT', behaviorClose: 'OK' },
      '6.4.1': { behavior: 'NON-STRICT', behaviorClose: 'OK' },
      '6.4.10': { behavior: 'NON-STRICT', behaviorClose: 'OK' },
      '7.1.6': { behavior: 'INFORMATIONAL', behaviorClose: 'INFORMATIONAL' },
      '2.10': { behavior: 'FAILED', behaviorClose: 'OK' },
    },
  });
  assert.deepEqual(s.plain.counts, { OK: 1, 'NON-STRICT': 3, INFORMATIONAL: 1, UNIMPLEMENTED: 1, FAILED: 1 });
  assert.equal(s.plain.cases, 7);
  assert.deepEqual(s.plain.others['NON-STRICT'], ['6.4.1', '6.4.2', '6.4.10']);
  assert.deepEqual(formatSummary(s), [
    'plain: 7 cases: OK 1, NON-STRICT 3, INFORMATIONAL 1, UNIMPLEMENTED 1, FAILED 1',
    '  NON-STRICT: 6.4.1–6.4.2, 6.4.10',
    '  INFORMATIONAL: 7.1.6',
    '  UNIMPLEMENTED: 12.1.1',
    '  FAILED: 2.10',
  ]);
  assert.equal(compactCases(['9.1.1', '9.1.2', '9.1.3', '9.2.1']), '9.1.1–9.1.3, 9.2.1');
});

test('summarize refuses what is not an index instead of reporting zero failures', () => {
  assert.throws(() => summarize([]), /not an object of agents/);
  assert.throws(() => summarize(null), /not an object of agents/);
  assert.throws(() => summarize({ plain: null }), /agent plain has no cases/);
  assert.throws(() => summarize({ plain: { '1.1.1': {} } }), /case 1\.1\.1 of plain has no behavior/);
});
