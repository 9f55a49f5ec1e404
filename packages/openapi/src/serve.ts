// openapi(app, options) and asyncapi(app, options): route handlers that serve a document
// generated once, at the first request (every route exists by then: the app's routes are
// final once it started), and kept as a prepared JSON string.
import type { App, Request, Response } from '@tachyon/server';
import { checkAsyncApiOptions, checkOpenApiOptions, type AsyncApiOptions, type OpenApiOptions } from './options.ts';
import { generateOpenApi } from './openapi.ts';
import { generateAsyncApi } from './asyncapi.ts';
import { referenceFiles } from './reference.ts';

/** What openapi() and asyncapi() return: a handler for `app.get(path, …)`. */
export type DocumentHandler = (req: Request, res: Response) => void;

const JSON_TYPE = 'application/json; charset=utf-8';

/**
 * A handler serving the app's OpenAPI 3.1 document: `app.get('/openapi.json', openapi(app, { info }))`.
 * With `docs: '/docs'` it also declares, on `app`, right away, the reference page at
 * `/docs` and what it loads below it (`/docs/openapi.json`, the Swagger UI files). The
 * document leaves out these routes and the one serving it.
 */
export function openapi(app: App, options: OpenApiOptions): DocumentHandler {
  checkOpenApiOptions(options);
  const exclude = new Set<string>();
  let text: string | undefined;
  const serve = (req: Request, res: Response) => {
    // The route serving the document is not part of the API it documents: learned here,
    // the only place that knows it (a new one drops the document made without it).
    for (const method of ['GET', 'HEAD', 'ANY']) {
      const key = `${method} ${req.route}`;
      if (!exclude.has(key)) {
        exclude.add(key);
        text = undefined;
      }
    }
    text ??= JSON.stringify(generateOpenApi(app, options, exclude));
    res.header('content-type', JSON_TYPE).end(text);
  };
  if (options.docs !== undefined) declareReference(app, options.docs, options.info.title, serve, exclude);
  return serve;
}

function declareReference(app: App, path: string, title: string, serveDocument: DocumentHandler, exclude: Set<string>): void {
  const base = path.length > 1 ? path.replace(/\/+$/, '') : '';
  const { files, page } = referenceFiles(base, title);
  const get = (at: string, handler: DocumentHandler) => {
    exclude.add(`GET ${at}`);
    app.get(at, handler);
  };
  get(base || '/', (_req, res) => res.html(page));
  get(`${base}/openapi.json`, serveDocument);
  for (const [name, [type, body]] of files)
    get(`${base}/${name}`, (_req, res) => res.header('content-type', type).header('cache-control', 'public, max-age=3600').end(body));
}

/** A handler serving the AsyncAPI 3.0 document of the app's WebSocket routes: `app.get('/asyncapi.json', asyncapi(app, { info }))`. */
export function asyncapi(app: App, options: AsyncApiOptions): DocumentHandler {
  checkAsyncApiOptions(options);
  let text: string | undefined;
  return (_req, res) => {
    text ??= JSON.stringify(generateAsyncApi(app, options));
    res.header('content-type', JSON_TYPE).end(text);
  };
}
