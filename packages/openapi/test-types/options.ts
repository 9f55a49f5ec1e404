// Type tests of @tachyon/openapi: the handlers fit app.get(), the options are typed, and
// the mistakes the run-time checks refuse fail to compile where the type can say so.
import { App } from '@tachyon/server';
import { z } from 'zod';
import {
  asyncapi,
  generateAsyncApi,
  generateOpenApi,
  openapi,
  type AsyncApiDocument,
  type OpenApiDocument,
  type OpenApiOptions,
  type ServeOptions,
} from '@tachyon/openapi';

const app = new App();
const info = { title: 'Shop', version: '1.0.0' };

app.get('/openapi.json', openapi(app, { info, servers: [{ url: 'https://api.example.com' }] }));
app.get('/asyncapi.json', asyncapi(app, { info, servers: { prod: { host: 'api.example.com', protocol: 'wss' } } }));
openapi.serve(app, {
  info,
  path: '/spec.json',
  docs: '/docs',
  securitySchemes: { bearer: { type: 'http', scheme: 'bearer' }, key: { type: 'apiKey', in: 'header', name: 'x-api-key' } },
  security: [{ bearer: [] }],
  tags: [{ name: 'users', description: 'People' }],
  onWarning: (message: string) => void message,
});

asyncapi.serve(app, { info, path: '/events.json' });
// @ts-expect-error path is openapi.serve()'s and asyncapi.serve()'s, not the handlers'
asyncapi(app, { info, path: '/events.json' });

const doc: OpenApiDocument = generateOpenApi(app, { info });
const fromTable: OpenApiDocument = generateOpenApi(app.routes(), { info });
const version: '3.1.0' = doc.openapi;
const events: AsyncApiDocument = generateAsyncApi(app, {
  info,
  topics: { 'room:*': { events: { chat: z.object({ text: z.string() }) } } },
});
void [fromTable, version, events];

// @ts-expect-error info needs a version
openapi(app, { info: { title: 'Shop' } });
// The reference page beside the handler (it loads `path`, default /openapi.json).
app.get('/openapi.json', openapi(app, { info, docs: '/docs' }));
// @ts-expect-error docs is a path
openapi(app, { info, docs: true });
// @ts-expect-error an unknown option
openapi(app, { info, server: [] });
// @ts-expect-error a security scheme needs a known type
openapi(app, { info, securitySchemes: { bearer: { type: 'bearer' } } });
// @ts-expect-error servers are objects with a url
openapi(app, { info, servers: ['https://api.example.com'] });
// @ts-expect-error a topic's events are schemas
asyncapi(app, { info, topics: { 'room:*': { events: { chat: 'string' } } } });
// @ts-expect-error not an app
generateOpenApi({}, { info });

const serveOptions: ServeOptions = { info, docs: '/docs' };
// @ts-expect-error docs is not an option of the handler
const handlerOptions: OpenApiOptions = { info, docs: '/docs' };
void [serveOptions, handlerOptions];
