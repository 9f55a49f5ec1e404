// openapi(app, options) and asyncapi(app, options): route handlers that serve a document
// generated once, at the first request (every route exists by then: the app's routes are
// final once it started), and kept as a prepared JSON string.
import type { App, Request, Response } from '@tachyon/server';
import {
  checkAsyncApiOptions,
  checkLiteralPath,
  checkOpenApiOptions,
  type AsyncApiOptions,
  type OpenApiOptions,
  type ServeOptions,
} from './options.ts';
import { generateOpenApi } from './openapi.ts';
import { generateAsyncApi } from './asyncapi.ts';
import { referenceFiles } from './reference.ts';

/** What openapi() and asyncapi() return: a handler for `app.get(path, …)`. */
export type DocumentHandler = (req: Request, res: Response) => void;

const JSON_TYPE = 'application/json; charset=utf-8';

/**
 * A handler serving the app's OpenAPI 3.1 document: `app.get('/openapi.json', openapi(app, { info }))`.
 * The document leaves out the route serving it (learned at its first request, which is when
 * the document is made). `openapi.serve()` also declares a reference page.
 */
function handler(app: App, options: OpenApiOptions): DocumentHandler {
  checkOpenApiOptions(options);
  return documentHandler(app, options, new Set());
}

function documentHandler(app: App, options: OpenApiOptions, exclude: Set<string>): DocumentHandler {
  let text: string | undefined;
  return (req, res) => {
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
}

/**
 * Declares, on `app`, now, the document at `path` (default `/openapi.json`) and, with
 * `docs: '/docs'`, the reference page at `/docs` and the Swagger UI files it loads below it.
 * None of these routes is in the document.
 */
function serve(app: App, options: ServeOptions): void {
  checkOpenApiOptions(options, 'openapi.serve()', true);
  const { path = '/openapi.json', docs, ...rest } = options;
  checkLiteralPath('openapi.serve()', 'path', path);
  const exclude = new Set<string>([`GET ${path}`]);
  app.get(path, documentHandler(app, rest, exclude));
  if (docs !== undefined) declareReference(app, docs, path, rest.info.title, exclude);
}

/** `app.get('/openapi.json', openapi(app, { info }))`, or `openapi.serve(app, { info, docs: '/docs' })` for the page too. */
export const openapi: typeof handler & { serve: typeof serve } = Object.assign(handler, { serve });

function declareReference(app: App, path: string, documentUrl: string, title: string, exclude: Set<string>): void {
  const base = path.length > 1 ? path.replace(/\/+$/, '') : '';
  const { files, page } = referenceFiles(base, documentUrl, title);
  const get = (at: string, handler: DocumentHandler) => {
    exclude.add(`GET ${at}`);
    app.get(at, handler);
  };
  get(base || '/', (_req, res) => res.html(page));
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
