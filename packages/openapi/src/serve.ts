// openapi(app, options) and asyncapi(app, options): route handlers that serve a document
// generated once, at the first request (every route exists by then: the app's routes are
// final once it started), and kept as a prepared JSON string.
import type { App, Request, Response } from '@tachyon/server';
import {
  checkAsyncApiOptions,
  checkLiteralPath,
  checkOpenApiOptions,
  type AsyncApiOptions,
  type AsyncApiServeOptions,
  type OpenApiOptions,
  type ServeOptions,
} from './options.ts';
import { generateOpenApi } from './openapi.ts';
import { generateAsyncApi } from './asyncapi.ts';
import { referenceFiles } from './reference.ts';
import { documentRoutes } from './document-routes.ts';

/** What openapi() and asyncapi() return: a handler for `app.get(path, …)`. */
export type DocumentHandler = (req: Request, res: Response) => void;

const JSON_TYPE = 'application/json; charset=utf-8';

/**
 * A handler serving the app's OpenAPI 3.1 document: `app.get('/openapi.json', openapi(app, { info }))`.
 * The document leaves out the routes serving documents (this one is learned at its first
 * request). With `docs: '/docs'` it also declares the reference page there, now; the page
 * loads the document from `path` (default `/openapi.json`: where the handler is meant to be
 * mounted — a handler learns its own route only when requested). `openapi.serve()` declares
 * the document's route too.
 */
function openapiHandler(app: App, options: OpenApiOptions & Pick<ServeOptions, 'path' | 'docs'>): DocumentHandler {
  checkOpenApiOptions(options);
  const { path = '/openapi.json', docs, ...rest } = options;
  if (docs === undefined) return documentHandler(app, () => generateOpenApi(app, rest));
  declarePage(app, docs, path, rest.info.title);
  const serve = documentHandler(app, () => generateOpenApi(app, rest));
  let checked = false;
  return (req, res) => {
    if (!checked && req.route !== path) {
      checked = true;
      app.logger.warn(
        { route: req.route, page: docs, loads: path },
        `openapi(): the reference page at ${docs} loads ${path}, but the document is served at ${req.route}: pass { path: '${req.route}' }`,
      );
    }
    serve(req, res);
  };
}

/** Serves `generate()` as JSON, made again only when a new document route became known. */
function documentHandler(app: App, generate: () => object): DocumentHandler {
  const routes = documentRoutes(app);
  let text = '';
  let madeAt = -1;
  return (req, res) => {
    routes.learn(req.route);
    if (madeAt !== routes.version) {
      text = JSON.stringify(generate());
      madeAt = routes.version;
    }
    res.header('content-type', JSON_TYPE).end(text);
  };
}

/**
 * Declares, on `app`, now, the document at `path` (default `/openapi.json`) and, with
 * `docs: '/docs'`, the reference page at `/docs` and the Swagger UI files it loads below it.
 * None of these routes is in the document.
 */
function serveOpenApi(app: App, options: ServeOptions): void {
  checkOpenApiOptions(options, 'openapi.serve()', true);
  const { path = '/openapi.json', docs, ...rest } = options;
  checkLiteralPath('openapi.serve()', 'path', path);
  declare(app, path, openapiHandler(app, rest));
  if (docs !== undefined) declarePage(app, docs, path, rest.info.title);
}

/** The reference page at `docs`, loading the document from `path`, and the files it loads below it. */
function declarePage(app: App, docs: string, path: string, title: string): void {
  const page = referenceFiles(docs.length > 1 ? docs.replace(/\/+$/, '') : '', path, title);
  declare(app, page.base || '/', (_req, res) => res.html(page.page));
  for (const [name, [type, body]] of page.files)
    declare(app, `${page.base}/${name}`, (_req, res) =>
      res.header('content-type', type).header('cache-control', 'public, max-age=3600').end(body),
    );
}

/** A GET route that no document lists. */
function declare(app: App, path: string, handler: DocumentHandler): void {
  app.get(path, handler);
  documentRoutes(app).learn(path);
}

/** `app.get('/openapi.json', openapi(app, { info }))`, or `openapi.serve(app, { info, docs: '/docs' })` for the page too. */
export const openapi: typeof openapiHandler & { serve: typeof serveOpenApi } = Object.assign(openapiHandler, { serve: serveOpenApi });

/** A handler serving the AsyncAPI 3.0 document of the app's WebSocket routes: `app.get('/asyncapi.json', asyncapi(app, { info }))`. */
function asyncapiHandler(app: App, options: AsyncApiOptions): DocumentHandler {
  checkAsyncApiOptions(options);
  return documentHandler(app, () => generateAsyncApi(app, options));
}

/** Declares, on `app`, now, the AsyncAPI document at `path` (default `/asyncapi.json`), left out of the OpenAPI document. */
function serveAsyncApi(app: App, options: AsyncApiServeOptions): void {
  checkAsyncApiOptions(options, 'asyncapi.serve()', true);
  const { path = '/asyncapi.json', ...rest } = options;
  checkLiteralPath('asyncapi.serve()', 'path', path);
  declare(app, path, asyncapiHandler(app, rest));
}

/** `app.get('/asyncapi.json', asyncapi(app, { info }))`, or `asyncapi.serve(app, { info })`. */
export const asyncapi: typeof asyncapiHandler & { serve: typeof serveAsyncApi } = Object.assign(asyncapiHandler, { serve: serveAsyncApi });
