import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { existsSync, readdirSync } from 'node:fs';
import { mkdir, mkdtemp, rm, stat, symlink, unlink, writeFile } from 'node:fs/promises';
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { App } from '../../src/index.ts';
import { createStatic, lookupMime, negotiateVariants, type StaticFiles } from '../../src/serving/static/index.ts';
import { eventually, rawRequest, sleep, start, statusOf, type Running } from '../helpers.ts';

interface Reply {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

function request(port: number, path: string, headers: Record<string, string> = {}, method = 'GET'): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, path, method, headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks) }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

/** A raw GET (no client-side normalization of the path), connection closed after the answer. */
async function rawGet(port: number, path: string): Promise<{ status: number; head: string; body: string }> {
  const raw = await rawRequest(port, `GET ${path} HTTP/1.1\r\nHost: x\r\nAccept: text/html\r\nConnection: close\r\n\r\n`);
  const split = raw.indexOf('\r\n\r\n');
  return { status: statusOf(raw), head: raw.slice(0, split), body: raw.slice(split + 4) };
}

const SECRET = 'TOP-SECRET-OUTSIDE-THE-ROOT';
const BIG_SIZE = 2 * 1024 * 1024 + 123;

function pattern(size: number): Buffer {
  const b = Buffer.alloc(size);
  for (let i = 0; i < size; i++) b[i] = (i * 31 + 7) & 255;
  return b;
}

describe('static files', () => {
  let tmp: string;
  let root: string;
  let srv: Running;
  let app: App;
  let files: StaticFiles;
  const instances: StaticFiles[] = [];
  const fixtures: Record<string, Buffer> = {};
  const mtimes: Record<string, number> = {};

  const get = (path: string, headers: Record<string, string> = {}, method = 'GET') => request(srv.port, path, headers, method);

  before(async () => {
    tmp = await mkdtemp(join(tmpdir(), 'tachyon-static-'));
    root = join(tmp, 'root');
    await mkdir(join(root, 'docs'), { recursive: true });
    await mkdir(join(root, '_app/immutable'), { recursive: true });
    await mkdir(join(root, '.hidden'), { recursive: true });
    await writeFile(join(tmp, 'secret.txt'), SECRET);
    await writeFile(join(tmp, 'outside-big.bin'), Buffer.alloc(1536 * 1024, SECRET));

    let js = '';
    for (let i = 0; js.length < 100 * 1024; i++) js += `export const value${i} = compute(${i}, 'static files are fast'); // line ${i}\n`;
    const add = (rel: string, body: string | Buffer) => (fixtures[rel] = Buffer.from(body));
    add(
      'index.html',
      '<!doctype html><html><head><title>home</title></head><body><h1>Home page</h1><p>Welcome to the static file test fixture.</p></body></html>\n',
    );
    add('site.css', 'body { color: red; margin: 0 auto; }\n'.repeat(50));
    add('app.js', js);
    add('logo.png', Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), randomBytes(4096)]));
    add('data.json', JSON.stringify({ hello: 'world', list: Array.from({ length: 50 }, (_, i) => i) }));
    add('big.bin', pattern(BIG_SIZE));
    add('swap.bin', pattern(1536 * 1024));
    add('empty.txt', '');
    add('.env', 'SECRET=dotenv');
    add('.hidden/x.txt', 'hidden');
    add('docs/index.html', '<!doctype html><h1>docs</h1>');
    add('docs/guide.txt', 'the guide');
    add('_app/immutable/chunk-abc123.js', 'export default 1;\n'.repeat(100));
    for (const [rel, body] of Object.entries(fixtures)) {
      await writeFile(join(root, rel), body);
      mtimes[rel] = (await stat(join(root, rel))).mtimeMs;
    }
    await symlink(join(tmp, 'secret.txt'), join(root, 'link-out.txt'));
    await symlink(tmp, join(root, 'linkdir-out'));
    await symlink(join(root, 'site.css'), join(root, 'link-in.css'));

    files = await createStatic(root, { maxAge: 60, immutable: /^\/_app\/immutable\// });
    const deny = await createStatic(root, { dotfiles: 'deny', precompress: false });
    const allow = await createStatic(root, { dotfiles: 'allow', precompress: false });
    const plain = await createStatic(root, { etag: false, lastModified: false, precompress: false, index: false });
    const spa = await createStatic(root, { fallback: 'index.html' });
    instances.push(files, deny, allow, plain, spa);

    app = new App();
    app.get('/static/*', files.handler);
    app.get('/deny/*', deny.handler);
    app.get('/allow/*', allow.handler);
    app.get('/plain/*', plain.handler);
    app.get('/*', spa.handler);
    srv = await start(app);
  });

  after(async () => {
    await srv.close();
    for (const f of instances) f.close();
    await rm(tmp, { recursive: true, force: true });
  });

  describe('basics', () => {
    test('content types, bodies and the file count', async () => {
      const cases: [string, string][] = [
        ['index.html', 'text/html; charset=utf-8'],
        ['site.css', 'text/css; charset=utf-8'],
        ['app.js', 'text/javascript; charset=utf-8'],
        ['logo.png', 'image/png'],
        ['data.json', 'application/json; charset=utf-8'],
        ['docs/guide.txt', 'text/plain; charset=utf-8'],
        ['big.bin', 'application/octet-stream'],
      ];
      for (const [rel, type] of cases) {
        const r = await get(`/static/${rel}`);
        assert.equal(r.status, 200, rel);
        assert.equal(r.headers['content-type'], type, rel);
        assert.ok(r.body.equals(fixtures[rel]!), `${rel}: body`);
        assert.equal(r.headers['accept-ranges'], 'bytes');
        assert.equal(r.headers['content-encoding'], undefined);
      }
      // 11 regular files outside dot-directories, .env skipped, plus link-in.css; link-out.txt and linkdir-out refused.
      assert.equal(files.size, 12);
    });

    test('empty file', async () => {
      const r = await get('/static/empty.txt');
      assert.equal(r.status, 200);
      assert.equal(r.headers['content-length'], '0');
      assert.equal(r.body.length, 0);
    });

    test('ETag, Last-Modified and Cache-Control', async () => {
      const r = await get('/static/site.css');
      assert.match(r.headers.etag!, /^"[0-9a-f]+-[\w-]{16}"$/);
      assert.ok(r.headers.etag!.startsWith(`"${fixtures['site.css']!.length.toString(16)}-`));
      assert.equal(r.headers['last-modified'], new Date(Math.floor(mtimes['site.css']! / 1000) * 1000).toUTCString());
      assert.equal(r.headers['cache-control'], 'public, max-age=60');
      const im = await get('/static/_app/immutable/chunk-abc123.js');
      assert.equal(im.headers['cache-control'], 'public, max-age=31536000, immutable');
      const dflt = await get('/plain/site.css');
      assert.equal(dflt.headers['cache-control'], 'public, max-age=0');
      assert.equal(dflt.headers.etag, undefined, 'etag: false');
      assert.equal(dflt.headers['last-modified'], undefined, 'lastModified: false');
      assert.equal((await get('/plain/site.css', { 'if-modified-since': new Date().toUTCString() })).status, 200);
    });

    test('lookupMime', () => {
      assert.equal(lookupMime('a/b/c.HTML'), 'text/html; charset=utf-8');
      assert.equal(lookupMime('x.woff2'), 'font/woff2');
      assert.equal(lookupMime('x.wasm'), 'application/wasm');
      assert.equal(lookupMime('x.mjs'), 'text/javascript; charset=utf-8');
      assert.equal(lookupMime('.env'), 'application/octet-stream');
      assert.equal(lookupMime('noext'), 'application/octet-stream');
      assert.equal(lookupMime('dir.v2/file'), 'application/octet-stream');
    });

    test('option and directory errors', async () => {
      await assert.rejects(createStatic(join(tmp, 'nope')));
      await assert.rejects(createStatic(join(root, 'site.css')), /Not a directory/);
      await assert.rejects(createStatic(root, { fallback: 'missing.html' }), /fallback file not found/);
      await assert.rejects(createStatic(root, { fallback: '../secret.txt' }), /Invalid fallback/);
      await assert.rejects(createStatic(root, { maxAge: -1 }), /maxAge/);
      await assert.rejects(createStatic(root, { dotfiles: 'maybe' as never }), /dotfiles/);
      await assert.rejects(createStatic(root, { index: 'a/b.html' }), /index/);
    });
  });

  describe('conditional requests', () => {
    test('If-None-Match: exact, in a list, weak, * → 304 without a body', async () => {
      const first = await get('/static/site.css');
      const etag = first.headers.etag!;
      for (const inm of [etag, `"nope", ${etag}`, `W/${etag}`, '*']) {
        const r = await get('/static/site.css', { 'if-none-match': inm });
        assert.equal(r.status, 304, inm);
        assert.equal(r.body.length, 0);
        assert.equal(r.headers.etag, etag);
        assert.equal(r.headers['cache-control'], 'public, max-age=60');
        assert.equal(r.headers['last-modified'], first.headers['last-modified']);
      }
      assert.equal((await get('/static/site.css', { 'if-none-match': '"other"' })).status, 200);
    });

    test('If-Modified-Since → 304; ignored when If-None-Match is present', async () => {
      const first = await get('/static/data.json');
      const lm = first.headers['last-modified']!;
      assert.equal((await get('/static/data.json', { 'if-modified-since': lm })).status, 304);
      assert.equal((await get('/static/data.json', { 'if-modified-since': new Date(Date.now() + 60_000).toUTCString() })).status, 304);
      assert.equal((await get('/static/data.json', { 'if-modified-since': 'Thu, 01 Jan 1998 00:00:00 GMT' })).status, 200);
      assert.equal((await get('/static/data.json', { 'if-modified-since': 'garbage' })).status, 200);
      assert.equal((await get('/static/data.json', { 'if-modified-since': lm, 'if-none-match': '"other"' })).status, 200);
    });

    test('304 of a file with variants carries Vary and the variant ETag', async () => {
      const br = await get('/static/app.js', { 'accept-encoding': 'br' });
      assert.match(br.headers.etag!, /-br"$/);
      const r = await get('/static/app.js', { 'accept-encoding': 'br', 'if-none-match': br.headers.etag! });
      assert.equal(r.status, 304);
      assert.equal(r.headers.vary, 'Accept-Encoding');
      assert.equal(r.headers.etag, br.headers.etag);
      assert.equal(r.headers['content-encoding'], undefined);
      // The br tag does not validate the identity representation.
      assert.equal((await get('/static/app.js', { 'if-none-match': br.headers.etag! })).status, 200);
    });
  });

  describe('content negotiation', () => {
    const original = () => fixtures['app.js']!;

    test('br, gzip and identity, by q-value', async () => {
      const cases: [string | undefined, string | undefined][] = [
        ['gzip, deflate, br, zstd', 'br'],
        ['br', 'br'],
        ['gzip', 'gzip'],
        ['x-gzip', 'gzip'],
        ['br;q=0.5, gzip;q=0.8', 'gzip'],
        ['br;q=1.0, gzip;q=0.8', 'br'],
        ['gzip;q=0, br;q=0', undefined],
        ['br;q=0, gzip', 'gzip'],
        ['*', 'br'],
        ['gzip;q=0, *', 'br'],
        ['br;q=0, *;q=0.5', 'gzip'],
        ['*;q=0', undefined],
        ['identity', undefined],
        ['identity;q=1, br;q=0.5', undefined],
        ['identity;q=0, gzip', 'gzip'],
        ['deflate', undefined],
        ['br;q=abc, gzip', 'gzip'],
        [undefined, undefined],
      ];
      for (const [ae, expected] of cases) {
        const r = await get('/static/app.js', ae === undefined ? {} : { 'accept-encoding': ae });
        assert.equal(r.status, 200);
        assert.equal(r.headers['content-encoding'], expected, `Accept-Encoding: ${ae}`);
        assert.equal(r.headers.vary, 'Accept-Encoding', 'Vary on every response of a file with variants');
        const body = expected === 'br' ? brotliDecompressSync(r.body) : expected === 'gzip' ? gunzipSync(r.body) : r.body;
        assert.ok(body.equals(original()), `body for ${ae}`);
        if (expected !== undefined) assert.ok(r.body.length < original().length / 3, 'compressed');
        assert.equal(Number(r.headers['content-length']), r.body.length);
      }
    });

    test('variants have their own ETags', async () => {
      const tags = new Set<string>();
      for (const ae of ['br', 'gzip', 'identity']) tags.add((await get('/static/app.js', { 'accept-encoding': ae })).headers.etag!);
      assert.equal(tags.size, 3);
    });

    test('already-compressed types are never encoded and do not Vary', async () => {
      const r = await get('/static/logo.png', { 'accept-encoding': 'br, gzip' });
      assert.equal(r.headers['content-encoding'], undefined);
      assert.equal(r.headers.vary, undefined);
      assert.ok(r.body.equals(fixtures['logo.png']!));
    });

    test('precompress: false keeps identity only', async () => {
      const r = await get('/plain/app.js', { 'accept-encoding': 'br, gzip' });
      assert.equal(r.headers['content-encoding'], undefined);
      assert.equal(r.headers.vary, undefined);
    });

    test('negotiateVariants table', () => {
      // index: 1 = br only, 2 = gzip only, 3 = both; 0 identity, 1 br, 2 gzip
      assert.deepEqual([...negotiateVariants('br, gzip')], [0, 1, 2, 1]);
      assert.deepEqual([...negotiateVariants('gzip')], [0, 0, 2, 2]);
      assert.deepEqual([...negotiateVariants('br;q=0.1, identity;q=0.5')], [0, 0, 0, 0]);
    });
  });

  describe('ranges', () => {
    const js = () => fixtures['app.js']!;

    test('bytes=a-b, a-, -n → 206 with identity bytes', async () => {
      const size = js().length;
      const cases: [string, number, number][] = [
        ['bytes=0-99', 0, 99],
        ['bytes=100-', 100, size - 1],
        ['bytes=-50', size - 50, size - 1],
        ['bytes=10-10', 10, 10],
        ['bytes=5-99999999', 5, size - 1],
        ['bytes=-99999999', 0, size - 1],
      ];
      for (const [range, a, b] of cases) {
        const r = await get('/static/app.js', { range, 'accept-encoding': 'br, gzip' });
        assert.equal(r.status, 206, range);
        assert.equal(r.headers['content-range'], `bytes ${a}-${b}/${size}`);
        assert.equal(r.headers['content-encoding'], undefined, 'ranges are of the identity bytes');
        assert.equal(r.headers.vary, 'Accept-Encoding');
        assert.ok(r.body.equals(js().subarray(a, b + 1)), range);
      }
    });

    test('unsatisfiable → 416 with bytes */size', async () => {
      const size = js().length;
      for (const range of [`bytes=${size}-`, `bytes=${size + 10}-${size + 20}`, 'bytes=-0']) {
        const r = await get('/static/app.js', { range });
        assert.equal(r.status, 416, range);
        assert.equal(r.headers['content-range'], `bytes */${size}`);
      }
      assert.equal((await get('/static/empty.txt', { range: 'bytes=0-' })).status, 416);
    });

    test('multiple or malformed ranges are ignored: 200 full', async () => {
      for (const range of ['bytes=0-1,5-6', 'bytes=5-2', 'bytes=abc', 'items=0-5', 'bytes=-']) {
        const r = await get('/static/site.css', { range });
        assert.equal(r.status, 200, range);
        assert.ok(r.body.equals(fixtures['site.css']!));
      }
    });

    test('If-Range: matching ETag or date honours Range, otherwise 200 full', async () => {
      const first = await get('/static/site.css');
      const { etag, 'last-modified': lm } = first.headers;
      assert.equal((await get('/static/site.css', { range: 'bytes=0-9', 'if-range': etag! })).status, 206);
      assert.equal((await get('/static/site.css', { range: 'bytes=0-9', 'if-range': lm! })).status, 206);
      assert.equal((await get('/static/site.css', { range: 'bytes=0-9', 'if-range': '"stale"' })).status, 200);
      assert.equal(
        (await get('/static/site.css', { range: 'bytes=0-9', 'if-range': `W/${etag}` })).status,
        200,
        'weak tags never match If-Range',
      );
      assert.equal((await get('/static/site.css', { range: 'bytes=0-9', 'if-range': 'Thu, 01 Jan 1998 00:00:00 GMT' })).status, 200);
      // The compressed variant's tag is not the identity's.
      const br = await get('/static/app.js', { 'accept-encoding': 'br' });
      assert.equal((await get('/static/app.js', { range: 'bytes=0-9', 'if-range': br.headers.etag! })).status, 200);
    });

    test('If-None-Match wins over Range', async () => {
      const etag = (await get('/static/site.css')).headers.etag!;
      assert.equal((await get('/static/site.css', { range: 'bytes=0-9', 'if-none-match': etag })).status, 304);
    });
  });

  describe('HEAD', () => {
    /** HEAD then GET pipelined on one connection: the GET's status line must follow the HEAD's headers immediately. */
    async function headThenGet(path: string): Promise<{ head: string; rest: string }> {
      const raw = await rawRequest(
        srv.port,
        `HEAD ${path} HTTP/1.1\r\nHost: x\r\n\r\nGET /static/docs/guide.txt HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`,
      );
      const split = raw.indexOf('\r\n\r\n');
      return { head: raw.slice(0, split), rest: raw.slice(split + 4) };
    }

    test('in-memory file: same headers, Content-Length, no body', async () => {
      const { head, rest } = await headThenGet('/static/site.css');
      assert.equal(statusOf(head), 200);
      assert.match(head, new RegExp(`\r\ncontent-length: ${fixtures['site.css']!.length}(\r\n|$)`, 'i'));
      assert.match(head, /\r\ncontent-type: text\/css; charset=utf-8/);
      assert.match(head, /\r\netag: "/);
      assert.ok(rest.startsWith('HTTP/1.1 200 OK'), 'no body after the HEAD response');
      assert.ok(rest.endsWith('the guide'));
    });

    test('compressed variant: Content-Length of the variant', async () => {
      const br = await get('/static/app.js', { 'accept-encoding': 'br' });
      const r = await get('/static/app.js', { 'accept-encoding': 'br' }, 'HEAD');
      assert.equal(r.status, 200);
      assert.equal(r.headers['content-encoding'], 'br');
      assert.equal(r.headers['content-length'], String(br.body.length));
      assert.equal(r.body.length, 0);
    });

    test('streamed large file: Content-Length, no body', async () => {
      // Not pipelined: uWS drops a connection whose pipelined request arrives while an
      // async response is pending. Keep-alive: whatever arrives within 300 ms is read.
      const raw = await rawRequest(srv.port, 'HEAD /static/big.bin HTTP/1.1\r\nHost: x\r\n\r\n', { timeout: 300 });
      assert.equal(statusOf(raw), 200);
      assert.match(raw, new RegExp(`\r\ncontent-length: ${BIG_SIZE}\r\n`, 'i'));
      assert.match(raw, /\r\netag: "/);
      assert.ok(raw.endsWith('\r\n\r\n'), 'no body');
    });
  });

  describe('index and SPA fallback', () => {
    test('directories serve their index, with or without the slash', async () => {
      for (const path of ['/static/', '/static/index.html']) {
        const r = await get(path);
        assert.equal(r.status, 200, path);
        assert.ok(r.body.equals(fixtures['index.html']!));
      }
      for (const path of ['/static/docs/', '/static/docs', '/static/docs/index.html']) {
        const r = await get(path);
        assert.equal(r.status, 200, path);
        assert.ok(r.body.equals(fixtures['docs/index.html']!), path);
        assert.equal(r.headers['content-type'], 'text/html; charset=utf-8');
      }
      assert.equal((await get('/plain/docs/')).status, 404, 'index: false');
      assert.equal((await get('/plain/docs/index.html')).status, 200);
    });

    test('mounted at /: the wildcard is the whole path', async () => {
      assert.ok((await get('/')).body.equals(fixtures['index.html']!));
      assert.ok((await get('/site.css')).body.equals(fixtures['site.css']!));
      assert.ok((await get('/docs/guide.txt')).body.equals(fixtures['docs/guide.txt']!));
    });

    test('unmatched HTML navigations get the fallback with 200 and Vary: Accept', async () => {
      for (const path of ['/about', '/deep/link/page', '/users/42?tab=1']) {
        const r = await get(path, { accept: 'text/html,application/xhtml+xml,*/*;q=0.8', 'accept-encoding': 'gzip' });
        assert.equal(r.status, 200, path);
        assert.ok(gunzipSync(r.body).equals(fixtures['index.html']!) || r.body.equals(fixtures['index.html']!));
        assert.match(r.headers.vary!, /Accept\b/);
        assert.equal(r.headers['content-type'], 'text/html; charset=utf-8');
      }
      const head = await get('/about', { accept: 'text/html' }, 'HEAD');
      assert.equal(head.status, 200);
    });

    test('no fallback for paths with an extension, non-HTML requests, or without the option', async () => {
      const notFound = async (path: string, headers: Record<string, string>) => {
        const r = await get(path, headers);
        assert.equal(r.status, 404, `${path} ${JSON.stringify(headers)}`);
        assert.deepEqual(JSON.parse(r.body.toString()), { error: 'Not Found' });
      };
      await notFound('/missing.js', { accept: 'text/html' });
      await notFound('/missing.css', { accept: 'text/html' });
      await notFound('/about', { accept: 'application/json' });
      await notFound('/about', { accept: '*/*' });
      await notFound('/about', {});
      await notFound('/static/about', { accept: 'text/html' });
    });
  });

  describe('dotfiles', () => {
    test("'ignore' answers 404 as if absent", async () => {
      assert.equal((await get('/static/.env')).status, 404);
      assert.equal((await get('/static/.hidden/x.txt')).status, 404);
      assert.equal((await get('/.env', { accept: 'text/html' })).status, 404, 'never the fallback');
    });
    test("'deny' answers 403", async () => {
      assert.equal((await get('/deny/.env')).status, 403);
      assert.equal((await get('/deny/.hidden/x.txt')).status, 403);
      assert.equal((await get('/deny/.git/config')).status, 403);
      assert.equal((await get('/deny/site.css')).status, 200);
    });
    test("'allow' serves them", async () => {
      const r = await get('/allow/.env');
      assert.equal(r.status, 200);
      assert.equal(r.body.toString(), 'SECRET=dotenv');
      assert.equal((await get('/allow/.hidden/x.txt')).body.toString(), 'hidden');
    });
  });

  describe('path traversal and smuggling (raw sockets)', () => {
    const refused = async (path: string, status = 404) => {
      const r = await rawGet(srv.port, path);
      assert.equal(r.status, status, `${path}: ${r.head}`);
      assert.ok(!r.body.includes(SECRET), `${path} leaked the secret`);
      assert.ok(!r.body.includes('<h1>Home page'), `${path} got the SPA fallback`);
      return r;
    };

    test('literal ../', async () => {
      await refused('/static/../secret.txt');
      await refused('/static/docs/../../secret.txt');
      await refused('/../secret.txt');
    });
    test('percent-encoded dots: %2e%2e', async () => {
      await refused('/static/%2e%2e/secret.txt');
      await refused('/static/%2E%2E/%2e%2e/secret');
      await refused('/%2e%2e/secret');
    });
    test('double-encoded dots: %252e%252e', async () => {
      await refused('/static/%252e%252e/secret.txt');
      await refused('/%252e%252e%252fsecret');
    });
    test('encoded slash: ..%2f, and %2f to a real file', async () => {
      await refused('/static/..%2fsecret.txt');
      await refused('/..%2f..%2fsecret');
      await refused('/static/docs%2fguide.txt');
      await refused('/static/docs%2Fguide.txt');
    });
    test('encoded and literal backslash: ..%5c and \\', async () => {
      await refused('/static/..%5csecret.txt');
      await refused('/static/..\\secret.txt');
      await refused('/static/docs\\guide.txt');
    });
    test('NUL byte: %00 → 400', async () => {
      await refused('/static/a%00.txt', 400);
      await refused('/static/site.css%00.png', 400);
    });
    test('absolute paths and empty segments', async () => {
      await refused('/static//etc/passwd');
      await refused(`/static/${tmp}/secret.txt`);
      await refused('/static/docs//guide.txt');
      await refused('/static/./site.css');
      await refused('/static/C:/Windows/win.ini');
    });
    test('overlong UTF-8 dots are malformed: 400', async () => {
      await refused('/static/%c0%ae%c0%ae/secret.txt', 400);
    });
    test('symlinks pointing outside the root are not served; inside the root they are', async () => {
      await refused('/static/link-out.txt');
      await refused('/static/linkdir-out/secret.txt');
      const inside = await rawGet(srv.port, '/static/link-in.css');
      assert.equal(inside.status, 200);
      assert.equal(inside.body, fixtures['site.css']!.toString());
    });
    test('a streamed file swapped for a symlink out of the root after loading: 404', async () => {
      const before = await get('/static/swap.bin', { range: 'bytes=0-3' });
      assert.equal(before.status, 206);
      await unlink(join(root, 'swap.bin'));
      await symlink(join(tmp, 'outside-big.bin'), join(root, 'swap.bin'));
      const r = await refused('/static/swap.bin');
      assert.deepEqual(JSON.parse(r.body), { error: 'Not Found' });
    });
  });

  describe('large files', () => {
    test('streamed with the same headers, ETag from size and mtime', async () => {
      const r = await get('/static/big.bin', { 'accept-encoding': 'br, gzip' });
      assert.equal(r.status, 200);
      assert.ok(r.body.equals(fixtures['big.bin']!));
      assert.equal(r.headers['content-type'], 'application/octet-stream');
      assert.equal(r.headers.etag, `"${BIG_SIZE.toString(16)}-${Math.floor(mtimes['big.bin']!).toString(16)}"`);
      assert.equal(r.headers['cache-control'], 'public, max-age=60');
      assert.equal(r.headers['accept-ranges'], 'bytes');
      assert.equal(r.headers['content-encoding'], undefined);
      assert.equal((await get('/static/big.bin', { 'if-none-match': r.headers.etag! })).status, 304);
      assert.equal((await get('/static/big.bin', { 'if-modified-since': r.headers['last-modified']! })).status, 304);
    });

    test('ranges from disk', async () => {
      const big = fixtures['big.bin']!;
      const mid = await get('/static/big.bin', { range: 'bytes=1000000-1000999' });
      assert.equal(mid.status, 206);
      assert.equal(mid.headers['content-range'], `bytes 1000000-1000999/${BIG_SIZE}`);
      assert.ok(mid.body.equals(big.subarray(1000000, 1001000)));
      const tail = await get('/static/big.bin', { range: 'bytes=-100' });
      assert.ok(tail.body.equals(big.subarray(BIG_SIZE - 100)));
      const open = await get('/static/big.bin', { range: `bytes=${BIG_SIZE - 10}-` });
      assert.ok(open.body.equals(big.subarray(BIG_SIZE - 10)));
      const bad = await get('/static/big.bin', { range: `bytes=${BIG_SIZE}-` });
      assert.equal(bad.status, 416);
      assert.equal(bad.headers['content-range'], `bytes */${BIG_SIZE}`);
    });

    test('200 clients aborting mid-stream: no crash, no leak, the next request works', async () => {
      const fds = () => (existsSync('/proc/self/fd') ? readdirSync('/proc/self/fd').length : 0);
      const fdsBefore = fds();
      const abortOnce = () =>
        new Promise<void>((resolve) => {
          const socket = connect(srv.port, '127.0.0.1');
          socket.on('data', () => socket.destroy());
          socket.on('close', () => resolve());
          socket.on('error', () => resolve());
          socket.write('GET /static/big.bin HTTP/1.1\r\nHost: x\r\n\r\n');
        });
      for (let batch = 0; batch < 10; batch++) await Promise.all(Array.from({ length: 20 }, abortOnce));
      await eventually(() => app.inflight === 0, 5000);
      await eventually(() => fds() <= fdsBefore + 2, 5000);
      const r = await get('/static/big.bin');
      assert.equal(r.status, 200);
      assert.ok(r.body.equals(fixtures['big.bin']!));
    });
  });
});

describe('static files: watch mode', () => {
  let tmp: string;
  let srv: Running;
  let files: StaticFiles;

  before(async () => {
    tmp = await mkdtemp(join(tmpdir(), 'tachyon-static-watch-'));
    await writeFile(join(tmp, 'a.txt'), 'one');
    await writeFile(join(tmp, 'gone.txt'), 'bye');
    files = await createStatic(tmp, { watch: true });
    const app = new App();
    app.get('/w/*', files.handler);
    srv = await start(app);
  });

  after(async () => {
    files.close();
    await srv.close();
    await rm(tmp, { recursive: true, force: true });
  });

  /** Polls until the path answers as expected (bounded). */
  async function until(path: string, check: (r: Reply) => boolean, timeout = 5000): Promise<Reply> {
    const end = Date.now() + timeout;
    for (;;) {
      const r = await request(srv.port, path);
      if (check(r)) return r;
      if (Date.now() > end) throw new Error(`${path} did not change in time (last: ${r.status} ${r.body.toString().slice(0, 50)})`);
      await sleep(25);
    }
  }

  test('a changed file is reloaded, with a new ETag', async () => {
    const first = await request(srv.port, '/w/a.txt');
    assert.equal(first.body.toString(), 'one');
    await writeFile(join(tmp, 'a.txt'), 'two, longer');
    const r = await until('/w/a.txt', (x) => x.body.toString() === 'two, longer');
    assert.notEqual(r.headers.etag, first.headers.etag);
  });

  test('new files and directories are added, deleted ones dropped', async () => {
    await writeFile(join(tmp, 'b.txt'), 'new file');
    assert.equal((await until('/w/b.txt', (x) => x.status === 200)).body.toString(), 'new file');
    await mkdir(join(tmp, 'sub'));
    await writeFile(join(tmp, 'sub', 'index.html'), '<p>sub</p>');
    assert.equal((await until('/w/sub/', (x) => x.status === 200)).body.toString(), '<p>sub</p>');
    await unlink(join(tmp, 'gone.txt'));
    await until('/w/gone.txt', (x) => x.status === 404);
    assert.equal(files.size, 3);
  });

  test('close() stops watching', async () => {
    files.close();
    await writeFile(join(tmp, 'late.txt'), 'late');
    await sleep(300);
    assert.equal((await request(srv.port, '/w/late.txt')).status, 404);
  });
});

describe('static files in an app that compresses responses', () => {
  let tmp: string;
  let srv: Running;
  let files: StaticFiles;
  let js = '';

  before(async () => {
    tmp = await mkdtemp(join(tmpdir(), 'tachyon-static-compress-'));
    for (let i = 0; js.length < 50 * 1024; i++) js += `export const v${i} = ${i};\n`;
    await writeFile(join(tmp, 'app.js'), js);
    await writeFile(join(tmp, 'big.js'), js.repeat(30));
    files = await createStatic(tmp);
    const app = new App({ compression: true });
    // Static routes do their own (pre)compression: they must not be compressed again.
    app.get('/s/*', { compress: false }, files.handler);
    srv = await start(app);
  });

  after(async () => {
    files.close();
    await srv.close();
    await rm(tmp, { recursive: true, force: true });
  });

  test('precompressed variants, identity ranges and HEAD lengths are left alone', async () => {
    const br = await request(srv.port, '/s/app.js', { 'accept-encoding': 'br' });
    assert.equal(br.headers['content-encoding'], 'br');
    assert.equal(brotliDecompressSync(br.body).toString(), js);
    const part = await request(srv.port, '/s/app.js', { 'accept-encoding': 'br', range: 'bytes=0-99' });
    assert.equal(part.status, 206);
    assert.equal(part.headers['content-encoding'], undefined);
    assert.equal(part.body.toString(), js.slice(0, 100));
    const big = await request(srv.port, '/s/big.js', { 'accept-encoding': 'br' });
    assert.equal(big.headers['content-encoding'], undefined, 'large files are streamed as they are');
    assert.equal(big.body.length, js.length * 30);
    const head = await request(srv.port, '/s/big.js', { 'accept-encoding': 'br' }, 'HEAD');
    assert.equal(head.headers['content-length'], String(js.length * 30));
  });
});

describe('app.static wiring', () => {
  let tmp: string;
  let srv: Running;
  before(async () => {
    tmp = await mkdtemp(join(tmpdir(), 'tachyon-static-app-'));
    await writeFile(join(tmp, 'index.html'), '<h1>home</h1>');
    await writeFile(join(tmp, 'app.js'), 'console.log("x");\n'.repeat(200));
    await writeFile(join(tmp, 'big.bin'), Buffer.alloc(3 * 1024 * 1024, 9));
    const app = new App({ compression: true }); // app-wide compression must not touch static files
    app.static('/', tmp, { memoryThreshold: 1024 * 1024 });
    app.static('/assets', tmp);
    app.get('/api/ping', () => ({ pong: true }));
    app.notFound((req, res) => res.status(404).json({ custom: 'nothing at ' + req.path }));
    srv = await start(app); // listen() waits for the files to load
  });
  after(async () => {
    await srv.close();
    await rm(tmp, { recursive: true, force: true });
  });

  test('served at / and under a prefix, next to API routes', async () => {
    assert.equal(await (await fetch(srv.url + '/')).text(), '<h1>home</h1>');
    assert.equal(await (await fetch(srv.url + '/assets/index.html')).text(), '<h1>home</h1>');
    assert.equal(await (await fetch(srv.url + '/assets')).text(), '<h1>home</h1>');
    assert.deepEqual(await (await fetch(srv.url + '/api/ping')).json(), { pong: true });
  });

  test("misses go to the app's notFound handler; other methods too", async () => {
    const r = await fetch(srv.url + '/missing.txt');
    assert.equal(r.status, 404);
    assert.deepEqual(await r.json(), { custom: 'nothing at /missing.txt' });
    assert.equal((await fetch(srv.url + '/index.html', { method: 'POST' })).status, 404);
  });

  test('precompressed variants are used, not re-compressed by the app-wide compression', async () => {
    const r = await new Promise<{ enc?: string; body: Buffer }>((resolve) => {
      httpRequest({ port: srv.port, host: '127.0.0.1', path: '/app.js', headers: { 'accept-encoding': 'br' } }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c) => chunks.push(c));
        res.on('end', () => resolve({ enc: res.headers['content-encoding'] as string, body: Buffer.concat(chunks) }));
      }).end();
    });
    assert.equal(r.enc, 'br');
    assert.equal(brotliDecompressSync(r.body).toString(), 'console.log("x");\n'.repeat(200));
  });

  test('large files stream with Content-Length; HEAD reports it exactly', async () => {
    const r = await fetch(srv.url + '/big.bin');
    assert.equal(r.headers.get('content-length'), String(3 * 1024 * 1024));
    assert.equal((await r.arrayBuffer()).byteLength, 3 * 1024 * 1024);
    const head = await rawRequest(srv.port, 'HEAD /big.bin HTTP/1.1\r\nHost: x\r\n\r\n', { until: /\r\n\r\n/, timeout: 300 });
    assert.match(head, /content-length: 3145728/i);
    const range = await fetch(srv.url + '/big.bin', { headers: { range: 'bytes=100-199' } });
    assert.equal(range.status, 206);
    assert.equal(range.headers.get('content-length'), '100');
  });

  test('a missing directory fails listen() clearly', async () => {
    const app = new App();
    app.static('/', join(tmp, 'does-not-exist'));
    await assert.rejects(app.listen(0), /ENOENT|no such file/);
  });
});

describe('static files: precompressed (variants made at build time)', () => {
  test('<file>.br and <file>.gz are the variants, not files of their own; nothing is compressed at load', async () => {
    const { brotliCompressSync, gzipSync } = await import('node:zlib');
    const tmp = await mkdtemp(join(tmpdir(), 'tachyon-precompressed-'));
    try {
      const js = 'export const x = "precompressed at build time";\n'.repeat(40);
      await writeFile(join(tmp, 'app.js'), js);
      const br = brotliCompressSync(js);
      const gz = gzipSync(js);
      await writeFile(join(tmp, 'app.js.br'), br);
      await writeFile(join(tmp, 'app.js.gz'), gz);
      await writeFile(join(tmp, 'plain.js'), js); // no siblings: identity only (no compression at load)
      await writeFile(join(tmp, 'archive.tar.gz'), gzipSync('not a variant of anything'));
      const files = await createStatic(tmp, { precompressed: true });
      assert.equal(files.size, 3, 'app.js, plain.js, archive.tar.gz');
      const app = new App();
      app.get('/*', files.handler);
      const srv = await start(app);
      try {
        const b = await request(srv.port, '/app.js', { 'accept-encoding': 'br' });
        assert.equal(b.headers['content-encoding'], 'br');
        assert.ok(b.body.equals(br), "the build's brotli bytes");
        const g = await request(srv.port, '/app.js', { 'accept-encoding': 'gzip' });
        assert.equal(g.headers['content-encoding'], 'gzip');
        assert.ok(g.body.equals(gz));
        assert.equal(gunzipSync(g.body).toString(), js);
        const p = await request(srv.port, '/plain.js', { 'accept-encoding': 'br, gzip' });
        assert.equal(p.headers['content-encoding'], undefined);
        assert.equal(p.body.toString(), js);
        assert.equal((await request(srv.port, '/app.js.br')).status, 404);
        assert.equal((await request(srv.port, '/archive.tar.gz')).status, 200);
      } finally {
        await srv.close();
      }
      await assert.rejects(createStatic(tmp, { precompressed: 'yes' as never }), /precompressed must be a boolean/);
    } finally {
      await rm(tmp, { recursive: true, force: true });
    }
  });
});

describe('static files: precompressed, over the memory threshold (streamed from disk)', () => {
  test('the build variants are streamed too: br/gzip negotiated, own ETags and 304s, identity ranges, identity when a variant is gone', async () => {
    const { brotliCompressSync, gzipSync } = await import('node:zlib');
    const tmp = await mkdtemp(join(tmpdir(), 'tachyon-precompressed-large-'));
    try {
      const json = Buffer.from(JSON.stringify(Array.from({ length: 3000 }, (_, i) => ({ i, name: `place ${i}` }))));
      const br = brotliCompressSync(json);
      const gz = gzipSync(json);
      await writeFile(join(tmp, 'data.json'), json);
      await writeFile(join(tmp, 'data.json.br'), br);
      await writeFile(join(tmp, 'data.json.gz'), gz);
      // A variant no smaller than the file is not one.
      const noise = randomBytes(4096);
      await writeFile(join(tmp, 'noise.bin'), noise);
      await writeFile(join(tmp, 'noise.bin.gz'), gzipSync(noise));
      const files = await createStatic(tmp, { precompressed: true, memoryThreshold: 1024 });
      assert.equal(files.size, 2);
      const app = new App();
      app.get('/*', files.handler);
      const srv = await start(app);
      try {
        const b = await request(srv.port, '/data.json', { 'accept-encoding': 'br, gzip' });
        assert.equal(b.status, 200);
        assert.equal(b.headers['content-encoding'], 'br');
        assert.equal(b.headers['content-length'], String(br.length));
        assert.equal(b.headers.vary, 'Accept-Encoding');
        assert.match(b.headers.etag!, /-br"$/);
        assert.ok(b.body.equals(br), "the build's brotli bytes, from disk");
        const g = await request(srv.port, '/data.json', { 'accept-encoding': 'gzip' });
        assert.equal(g.headers['content-encoding'], 'gzip');
        assert.ok(gunzipSync(g.body).equals(json));
        const id = await request(srv.port, '/data.json');
        assert.equal(id.headers['content-encoding'], undefined);
        assert.ok(id.body.equals(json));
        assert.doesNotMatch(id.headers.etag!, /-(br|gz)"$/);
        // Each representation revalidates with its own tag.
        assert.equal((await request(srv.port, '/data.json', { 'accept-encoding': 'br', 'if-none-match': b.headers.etag! })).status, 304);
        assert.equal((await request(srv.port, '/data.json', { 'accept-encoding': 'gzip', 'if-none-match': b.headers.etag! })).status, 200);
        // Ranges are of the identity bytes, whatever the client accepts.
        const part = await request(srv.port, '/data.json', { 'accept-encoding': 'br', range: 'bytes=100-199' });
        assert.equal(part.status, 206);
        assert.equal(part.headers['content-encoding'], undefined);
        assert.ok(part.body.equals(json.subarray(100, 200)));
        const n = await request(srv.port, '/noise.bin', { 'accept-encoding': 'gzip' });
        assert.equal(n.headers['content-encoding'], undefined);
        assert.ok(n.body.equals(noise));
        assert.equal((await request(srv.port, '/data.json.br')).status, 404);
        // The variant deleted after loading: the identity bytes, not an error.
        await unlink(join(tmp, 'data.json.br'));
        const gone = await request(srv.port, '/data.json', { 'accept-encoding': 'br' });
        assert.equal(gone.status, 200);
        assert.equal(gone.headers['content-encoding'], undefined);
        assert.ok(gone.body.equals(json));
        const head = await request(srv.port, '/data.json', { 'accept-encoding': 'gzip' }, 'HEAD');
        assert.equal(head.headers['content-length'], String(gz.length));
        assert.equal(head.body.length, 0);
      } finally {
        await srv.close();
      }
    } finally {
      await rm(tmp, { recursive: true, force: true });
    }
  });
});
