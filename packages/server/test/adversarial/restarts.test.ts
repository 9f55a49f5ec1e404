// In-process restarts: close() then listen() again on the same port, including a port the
// first server got from port 0 and on which it served keep-alive clients (TIME_WAIT).
import assert from 'node:assert/strict';
import http from 'node:http';
import { test } from 'node:test';
import { App } from '../../src/index.ts';

async function getKeepAlive(port: number, agent: http.Agent): Promise<string> {
  return new Promise((resolve, reject) => {
    http
      .get({ port, host: '127.0.0.1', agent }, (res) => {
        let body = '';
        res.on('data', (d) => (body += d)).on('end', () => resolve(body));
      })
      .on('error', reject);
  });
}

test('a port-0 server that served keep-alive clients can be restarted on the same port', async () => {
  const first = new App();
  first.get('/', () => 'first');
  const s1 = await first.listen({ port: 0, host: '127.0.0.1' });
  const port = s1.port;
  const agent = new http.Agent({ keepAlive: true, maxSockets: 4 });
  await Promise.all(Array.from({ length: 8 }, () => getKeepAlive(port, agent)));
  await s1.close({ timeout: 500 });
  agent.destroy();

  for (let round = 0; round < 3; round++) {
    const again = new App();
    again.get('/', () => `round ${round}`);
    const s2 = await again.listen({ port, host: '127.0.0.1' });
    assert.equal(s2.port, port);
    const agent2 = new http.Agent({ keepAlive: true });
    assert.equal(await getKeepAlive(port, agent2), `round ${round}`);
    await s2.close({ timeout: 500 });
    agent2.destroy();
  }
});

test('a port in use by another server is still refused (exclusive listen)', async () => {
  const a = new App();
  const sa = await a.listen({ port: 0, host: '127.0.0.1' });
  const b = new App();
  await assert.rejects(b.listen({ port: sa.port, host: '127.0.0.1' }), /address in use/);
  await sa.close();
});
