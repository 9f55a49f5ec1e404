// The web Request's URL keeps the last protocol and Host header it saw and the origin they
// made (web-url.ts): a request with another Host or protocol, a bad one, or none at all must
// never get the previous request's origin.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { App } from '../../src/index.ts';
import { plainTarget } from '../../src/serving/web-url.ts';
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

// plainTarget() decides whether the light Request may hand out its URL unparsed: a path it
// accepts must be one a WHATWG URL parser gives back unchanged. Checked on chosen cases and
// on generated paths from an alphabet rich in what parsers rewrite (dots, `%2e`, `'`, `\`,
// spaces, `#`, non-ASCII), against the parser itself and against the two regular
// expressions it replaced (the same answers, two loops).
describe('plainTarget(): only paths and queries a URL parser leaves as they are', () => {
  const PLAIN_PATH = /^\/[\w\-.~!$&()*+,;=:@%/]*(?:\?[\w\-.~!$&()*+,;=:@%/?]*)?$/;
  const DOT_SEGMENT = /^[^?]*?(?:\/\.|%2e)/i;
  const reference = (p: string) => PLAIN_PATH.test(p) && !DOT_SEGMENT.test(p);
  /** `p` as uWS gives it: the path up to the first `?`, the query after it. */
  const plain = (p: string) => {
    const q = p.indexOf('?');
    return q === -1 ? plainTarget(p, '') : plainTarget(p.slice(0, q), p.slice(q + 1));
  };
  const unchanged = (p: string) => new URL(`http://h${p}`).href === `http://h${p}`;

  test('chosen cases', () => {
    const cases: [string, boolean][] = [
      ['/', true],
      ['/users/42?fields=name,email', true],
      ['/a/b?x=/./..&y=%2e', true], // dots in the query are kept by the parser
      ['/a?b?c', true],
      ['', false],
      ['users', false],
      ['/a/./b', false],
      ['/a/../b', false],
      ['/.well-known/x', false],
      ['/a/%2e%2E/b', false],
      ['/a/%2E', false],
      ['/a%2', true],
      ['/a b', false],
      ["/it's", false],
      ['/caf\u00e9', false],
      ['/a#frag', false],
      ['/a\\b', false],
    ];
    for (const [path, expected] of cases) assert.equal(plain(path), expected, path);
  });

  test('generated paths: the same answers as the regular expressions, and unchanged by the parser when plain', () => {
    const alphabet = [
      '/',
      '/',
      '.',
      '.',
      '%',
      '2',
      'e',
      'E',
      '?',
      'a',
      'Z',
      '0',
      '-',
      '_',
      '~',
      '=',
      '&',
      "'",
      ' ',
      '#',
      '\\',
      '\u00e9',
      '"',
      '<',
      '[',
    ];
    let seed = 42;
    const next = () => (seed = (seed * 1103515245 + 12345) & 0x7fffffff);
    let plainCount = 0;
    for (let n = 0; n < 20_000; n++) {
      let path = n % 10 === 0 ? '' : '/';
      const length = next() % 12;
      for (let i = 0; i < length; i++) path += alphabet[next() % alphabet.length];
      assert.equal(plain(path), reference(path), JSON.stringify(path));
      if (plain(path)) {
        plainCount++;
        assert.ok(unchanged(path), `${JSON.stringify(path)} is changed by the URL parser`);
      }
    }
    assert.ok(plainCount > 1_000, `enough plain paths generated to mean something: ${plainCount}`);
  });
});
