// `app.client()`: serves @tachyon/client's minified browser build (an ES module, and the SSE
// transport it import()s from its own folder when a connection falls back) from the app, so a
// page without a bundler can `import { connect } from '/tachyon/client.js'` (or map the bare
// name with an import map: docs/client.md).
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { StaticOptions } from './static/options.ts';

export interface ClientOptions {
  /**
   * Cache-Control max-age in seconds. Default 0: browsers revalidate with the ETag (a cheap
   * 304), so upgrading the server never leaves pages on a client of another version.
   */
  maxAge?: number;
}

export interface ClientBundle {
  dir: string;
  file: string;
}

/**
 * The modules the browser build import()s, by the name it asks for, relative to itself
 * (packages/client/scripts/bundle.mjs writes them beside it; the bundle test checks the name).
 */
export const CLIENT_LAZY_FILES = ['tachyon-client-sse.min.js'] as const;

/** Where the lazy modules are served: beside the client's own path, as the browser resolves them. */
export function clientLazyPaths(path: string): { path: string; file: string }[] {
  const dir = path.slice(0, path.lastIndexOf('/') + 1);
  return CLIENT_LAZY_FILES.map((file) => ({ path: dir + file, file }));
}

/** Where the installed @tachyon/client keeps its browser build; a clear error when it is not installed. */
export function resolveClientBundle(): ClientBundle {
  let url: string;
  try {
    url = import.meta.resolve('@tachyon/client/browser');
  } catch (error) {
    throw new Error(
      `app.client() serves @tachyon/client's browser build, and @tachyon/client is not installed: npm install @tachyon/client (${(error as Error).message})`,
    );
  }
  const path = fileURLToPath(url);
  return { dir: dirname(path), file: path.slice(dirname(path).length + 1) };
}

/** Checks the route path and options; returns what `createStatic` needs to serve the one file. */
export function clientStaticOptions(path: string, options: ClientOptions, bundle: ClientBundle): StaticOptions {
  if (typeof path !== 'string' || !path.startsWith('/') || path.endsWith('/') || /[:*?#]/.test(path)) {
    throw new TypeError(`app.client() path must be a literal path like '/tachyon/client.js': ${JSON.stringify(path)}`);
  }
  if (typeof options !== 'object' || options === null) throw new TypeError('app.client() options must be an object');
  const maxAge = options.maxAge ?? 0;
  if (!(Number.isFinite(maxAge) && maxAge >= 0)) throw new TypeError('app.client() maxAge must be a non-negative number of seconds');
  // The route has no wildcard, so the handler serves its directory's "index": the bundle.
  return { index: bundle.file, maxAge, precompress: true, watch: false };
}
