// Tachyon layers for the "where the time goes" table, each answering the SSR page's bytes:
//   BENCH_LAYER=get    a plain route returning the HTML (routing, request/response objects)
//   BENCH_LAYER=mount  app.mount with a fetch handler returning new Response(html): adds the
//                      web Request made from uWS, the Response and reading its body
import { readFileSync } from 'node:fs';
import { App } from '@tachyon/server';

const html = readFileSync(process.env.BENCH_HTML, 'utf8');
const app = new App();
if (process.env.BENCH_LAYER === 'get') {
  app.get('/', (_req, res) => res.header('content-type', 'text/html').send(html));
} else {
  app.mount('/', () => new Response(html, { headers: { 'content-type': 'text/html' } }));
}
await app.listen(Number(process.env.PORT), '127.0.0.1');
console.log('READY');
