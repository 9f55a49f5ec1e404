// Tachyon's web-standard bridge: the realistic scenarios of the `tachyon` peer answered by one
// fetch handler (`(Request) => Response`, routing by hand as the node-http peer does) through
// `app.mount('/', …)`. Against `tachyon` it prices what mount() adds per request: the web
// Request made from uWS, its headers and body, the Response and reading its body.
import { App } from '@tachyon/server';
import { Params, Query, UserCreate, createdBody, userBody, portFromEnv, ready } from './shared.mjs';

const port = portFromEnv();

// The "one middleware" of the other servers: its header on every answer it runs for.
const MW = { 'x-mw': '1' };
const JSON_MW = { 'content-type': 'application/json', 'x-mw': '1' };
const bad = () => Response.json({ error: 'Bad Request' }, { status: 400 });

async function createUser(request) {
  if (!request.headers.get('content-type')?.startsWith('application/json')) return new Response(null, { status: 415 });
  let parsed;
  try {
    parsed = UserCreate.safeParse(await request.json());
  } catch {
    return bad();
  }
  if (!parsed.success) return bad();
  return new Response(JSON.stringify(createdBody(parsed.data)), { status: 201, headers: JSON_MW });
}

function handle(request) {
  const url = request.url;
  // The path and query straight from the string (as a router does), not a URL object.
  const start = url.indexOf('/', url.indexOf('//') + 2);
  const q = url.indexOf('?', start);
  const path = q === -1 ? url.slice(start) : url.slice(start, q);
  const method = request.method;
  if (method === 'GET' || method === 'HEAD') {
    if (path === '/') return new Response(null);
    if (path === '/mw') return new Response(null, { headers: MW });
    if (path.startsWith('/users/') && path.indexOf('/', 7) === -1) {
      const params = Params.safeParse({ id: decodeURIComponent(path.slice(7)) });
      const query = Query.safeParse(Object.fromEntries(new URLSearchParams(q === -1 ? '' : url.slice(q + 1))));
      if (!params.success || !query.success) return bad();
      return new Response(JSON.stringify(userBody(params.data.id, query.data.fields)), { headers: JSON_MW });
    }
  } else if (method === 'POST' && path === '/users') {
    return createUser(request);
  }
  return new Response(null, { status: 404 });
}

const app = new App();
app.mount('/', handle);
const server = await app.listen({ port, host: '127.0.0.1' });
ready(server.port);
