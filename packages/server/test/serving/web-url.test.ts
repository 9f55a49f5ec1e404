// The web Request's URL keeps the last protocol and Host header it saw and the origin they
// made (web-url.ts): a request with another Host or protocol, a bad one, or none at all must
// never get the previous request's origin.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { App } from '../../src/index.ts';
import { rawRequest, start } from '../helpers.ts';

test('each request gets its own origin, whatever the request before it carried', async () => {
  const app = new App({ trustProxy: true });
  app.mount('/', (request) => new Response(request.url));
  const srv = await start(app);
  const get = async (head: string) => {
    const raw = await rawRequest(srv.port, `GET /p?q=1 HTTP/1.1\r\n${head}Connection: close\r\n\r\n`);
    return raw.slice(raw.indexOf('\r\n\r\n') + 4);
  };
  try {
    const sequence: [string, string][] = [
      ['Host: a.example\r\n', 'http://a.example/p?q=1'],
      ['Host: a.example\r\n', 'http://a.example/p?q=1'],
      ['Host: b.example:8080\r\n', 'http://b.example:8080/p?q=1'],
      ['Host: a.example\r\n', 'http://a.example/p?q=1'],
      ['Host: a.example\r\nX-Forwarded-Proto: https\r\n', 'https://a.example/p?q=1'],
      ['Host: a.example\r\n', 'http://a.example/p?q=1'],
      ['Host: A.example:80\r\n', 'http://a.example/p?q=1'],
      ['Host: a.example/evil\r\n', 'http://localhost/p?q=1'],
      ['Host: a.example/evil\r\n', 'http://localhost/p?q=1'],
      ['Host: a.example:443\r\nX-Forwarded-Proto: https\r\n', 'https://a.example/p?q=1'],
      ['Host: a.example:443\r\n', 'http://a.example:443/p?q=1'],
    ];
    for (const [head, url] of sequence) assert.equal(await get(head), url, head);
    // An empty Host header: localhost, after a request that had one.
    assert.equal(await get('Host: \r\n'), 'http://localhost/p?q=1');
    assert.equal(await get('Host: a.example\r\n'), 'http://a.example/p?q=1');
  } finally {
    await srv.close();
  }
});
