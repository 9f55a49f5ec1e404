// Handshake checks uWS leaves to us: the WebSocket version (426), and the framing guard.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { App } from '../../src/index.ts';
import { rawRequest, start, statusOf, type Running } from '../helpers.ts';

let running: Running;
before(async () => {
  const app = new App();
  app.ws('/plain', {});
  app.ws('/hooked', { upgrade: () => ({ user: 1 }) });
  running = await start(app);
});
after(() => running.close());

const handshake = (path: string, version: string | null, extra = '') =>
  `GET ${path} HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n${version === null ? '' : `Sec-WebSocket-Version: ${version}\r\n`}${extra}\r\n`;

test('Sec-WebSocket-Version other than 13 gets 426 with the supported version', async () => {
  for (const path of ['/plain', '/hooked']) {
    for (const version of ['8', '12', '', null]) {
      const raw = await rawRequest(running.port, handshake(path, version), { until: /\r\n\r\n[\s\S]*13$/ });
      assert.equal(statusOf(raw), 426, `${path} v${version}: ${raw}`);
      assert.match(raw, /sec-websocket-version: 13/i);
    }
    const ok = await rawRequest(running.port, handshake(path, '13'), { until: /\r\n\r\n/ });
    assert.equal(statusOf(ok), 101, ok);
  }
});

test('a handshake with ambiguous framing is refused like any request', async () => {
  const raw = await rawRequest(running.port, handshake('/plain', '13', 'Transfer-Encoding: gzip\r\n'), { timeout: 2000 });
  assert.equal(statusOf(raw), 400, raw);
});
