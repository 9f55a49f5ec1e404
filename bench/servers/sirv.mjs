// sirv 3 on node:http: the static server SvelteKit's adapter-node uses. Implements the
// static scenarios only. The harness puts the files in <root>/static and passes
// STATIC_DIR=<root>/static; sirv serves <root>, so `/static/file-4k.txt` maps to the file
// with no prefix handling on our side (adapter-node likewise serves its client directory,
// whose `_app/` folder gives the URL prefix).
//
// sirv with `dev: false` walks the directory once at startup and caches each file's stat
// and headers (Content-Length, Content-Type, Last-Modified, a weak ETag from size and
// mtime), but reads the body from disk on every request (fs.createReadStream). No
// Cache-Control is sent unless `maxAge` is given, and no Vary unless gzip/brotli are on.
import http from 'node:http';
import path from 'node:path';
import sirv from 'sirv';
import { portFromEnv, ready } from './shared.mjs';

const port = portFromEnv();
const dir = process.env.STATIC_DIR;
if (!dir || path.basename(dir) !== 'static') {
  console.error(`sirv: STATIC_DIR must be set and end in /static (got ${JSON.stringify(dir)})`);
  process.exit(2);
}

const serve = sirv(path.dirname(dir), { etag: true, dev: false });

const server = http.createServer((req, res) => {
  serve(req, res, () => {
    res.statusCode = 404;
    res.end();
  });
});

server.listen(port, '127.0.0.1', () => ready(server.address().port));
server.on('error', (err) => {
  console.error(`sirv: failed to listen on 127.0.0.1:${port}: ${err.message}`);
  process.exit(1);
});
