// The ceiling: raw uWebSockets.js answering the same bytes as the SvelteKit servers (the
// SSR page as rendered, the endpoint's text, the 4 KiB asset), with the same content types. No framework work.
import { readFileSync } from 'node:fs';
import uWS from 'uWebSockets.js';

const html = readFileSync(process.env.BENCH_HTML);
const asset = readFileSync(new URL('../static/asset-4k.css', import.meta.url));
uWS
  .App()
  .get('/', (res) => {
    res.cork(() => res.writeStatus('200 OK').writeHeader('content-type', 'text/html').end(html));
  })
  .get('/hello', (res) => {
    res.cork(() => res.writeStatus('200 OK').writeHeader('content-type', 'text/plain').end('hello world'));
  })
  .get('/asset-4k.css', (res) => {
    res.cork(() => res.writeStatus('200 OK').writeHeader('content-type', 'text/css').end(asset));
  })
  .listen('127.0.0.1', Number(process.env.PORT), (s) => {
    if (!s) process.exit(1);
    console.log('READY');
  });
