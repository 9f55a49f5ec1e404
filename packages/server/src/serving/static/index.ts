// Static files served from memory (see docs/static.md). Everything that does not depend on
// the request is computed once, when the directory is loaded: bodies, brotli/gzip
// variants, ETags, Last-Modified, Cache-Control and the header lists themselves.
//
//   options.ts     options → checked config
//   load.ts        the file table: walk, read, precompress (entry.ts: what a file carries)
//   path-guard.ts  request path → may it name a file?
//   negotiate.ts   Accept-Encoding → variant
//   conditional.ts ETag / Last-Modified / Range decisions
//   serve.ts       the request handler
//   watch.ts       watch mode
//   mime.ts        content types
import type { Request } from '../../http/io/request.ts';
import type { Response } from '../../http/io/response.ts';
import type { Next } from '../../http/types.ts';
import { FileTable } from './load.ts';
import { resolveStaticOptions, type StaticOptions } from './options.ts';
import { StaticHandler } from './serve.ts';
import { StaticWatcher } from './watch.ts';

export { lookupMime } from './mime.ts';
export { negotiateVariants } from './negotiate.ts';
export type { StaticOptions } from './options.ts';

export interface StaticFiles {
  /** The route handler: reads the file path from `req.params['*']` (the empty path without a wildcard). */
  handler: (req: Request<any>, res: Response, next?: Next) => unknown;
  /** Stops watching (watch mode). The loaded files keep being served. */
  close(): void;
  /** Number of files loaded (in memory or streamed). */
  readonly size: number;
}

/**
 * Loads `dir` and returns a handler that serves it. Files up to `memoryThreshold` are read
 * into memory (with their compressed variants) before the promise resolves.
 */
export async function createStatic(dir: string, options: StaticOptions = {}): Promise<StaticFiles> {
  const c = resolveStaticOptions(options);
  const files = await FileTable.load(dir, c);
  const serving = new StaticHandler(files, c, options.notFound);
  const watcher = c.watch ? new StaticWatcher(files) : undefined;
  return {
    handler: (req, res) => serving.handle(req, res),
    close: () => watcher?.close(),
    get size() {
      return files.size;
    },
  };
}
