// The request handler. A hit in the file table costs one Map lookup, a few header reads
// and one `res.end(buffer)` with header lists built at load time; large files are
// re-checked and streamed from disk. Refusals are HttpErrors (400, 403, 405), so the
// route's error handlers answer them like any other error; misses go to `notFound`.
import { constants as fsc } from 'node:fs';
import { open, realpath, type FileHandle } from 'node:fs/promises';
import { HttpError } from '../../http/errors.ts';
import type { Request } from '../../http/io/request.ts';
import type { PreparedHeaders, Response } from '../../http/io/response.ts';
import { decide, FULL, NOT_MODIFIED, PARTIAL, range, UNSATISFIABLE } from './conditional.ts';
import type { Entry } from './entry.ts';
import { isErrno, type FileTable } from './load.ts';
import { extensionOf } from './mime.ts';
import { VariantPicker } from './negotiate.ts';
import type { StaticConfig } from './options.ts';
import { checkPath, hasDotSegment, hasEncodedSeparator, PATH_BAD_REQUEST, PATH_OK } from './path-guard.ts';

export type NotFound = (req: Request<any>, res: Response) => unknown;

const ALLOW = { allow: 'GET, HEAD' };

export class StaticHandler {
  private readonly files: FileTable;
  private readonly c: StaticConfig;
  private readonly notFound: NotFound;
  private readonly picker = new VariantPicker();

  constructor(files: FileTable, c: StaticConfig, notFound: NotFound | undefined) {
    this.files = files;
    this.c = c;
    this.notFound = notFound ?? throwNotFound;
  }

  /** Reads the file path from `req.params['*']` (the empty path without a wildcard). */
  handle(req: Request<any>, res: Response): unknown {
    const params = req.params as Record<string, string> | undefined;
    const p = params === undefined ? '' : (params['*'] ?? '');
    const e = this.files.lookup(p);
    // A hit is a path we loaded from inside the root. Its only other spelling is an encoded
    // slash (a%2Fb for a/b), refused like every other separator trick.
    if (e !== undefined && (!p.includes('/') || !hasEncodedSeparator(req.path))) {
      const m = req.method;
      if (m !== 'GET' && m !== 'HEAD') throw new HttpError(405, undefined, { headers: ALLOW });
      return this.serve(e, req, res, undefined);
    }
    return this.miss(p, req, res);
  }

  private serve(e: Entry, req: Request<any>, res: Response, extraVary: string | undefined): unknown {
    if (e.large) return this.serveLarge(e, req, res, extraVary);
    this.serveMemory(e, req, res);
    return undefined;
  }

  private miss(p: string, req: Request<any>, res: Response): unknown {
    const verdict = checkPath(p, req.path);
    if (verdict === PATH_BAD_REQUEST) throw new HttpError(400);
    if (verdict !== PATH_OK) return this.notFound(req, res);
    if (hasDotSegment(p)) {
      if (this.c.dotfiles === 'deny') throw new HttpError(403);
      if (this.c.dotfiles === 'ignore') return this.notFound(req, res);
    }
    const fb = this.files.fallback;
    if (fb !== undefined && extensionOf(p) === '') {
      const m = req.method;
      if (m === 'GET' || m === 'HEAD') {
        const accept = req.header('accept');
        if (accept?.includes('text/html')) return this.serve(fb, req, res, 'Accept');
        res.header('vary', 'Accept');
      }
    }
    return this.notFound(req, res);
  }

  private serveMemory(e: Entry, req: Request<any>, res: Response): void {
    const v = this.picker.pick(e, req);
    const d = decide(e, v, req);
    if (d === FULL) {
      writeHeaders(res, v.headers);
      res.end(v.body);
    } else if (d === NOT_MODIFIED) {
      res.status(304);
      writeHeaders(res, v.notModified);
      res.end();
    } else if (d === PARTIAL) {
      res.status(206);
      writeHeaders(res, e.identity.headers);
      res.header('content-range', `bytes ${range.start}-${range.end}/${e.size}`);
      res.end(e.identity.body.subarray(range.start, range.end + 1));
    } else {
      res.status(416);
      writeHeaders(res, e.unsatisfiable);
      res.end();
    }
  }

  /**
   * Large files: re-check the real path, open, stat, then stream (with backpressure) or answer
   * from the stat. A negotiated `.br`/`.gz` variant (precompressed builds) is streamed from its
   * own file; ranges are always of the identity bytes, as for files in memory.
   */
  private async serveLarge(e: Entry, req: Request<any>, res: Response, extraVary: string | undefined): Promise<unknown> {
    const src = e.src;
    let fh = await this.openInside(src.abs);
    if (fh === undefined) return this.notFound(req, res);
    let handedOff = false;
    try {
      const st = await fh.stat();
      if (!st.isFile()) return this.notFound(req, res);
      // Changed on disk since loaded: answer from what is there now.
      const cur = st.size !== src.size || st.mtimeMs !== src.mtimeMs ? this.files.refreshed(e, st.size, st.mtimeMs, extraVary) : e;
      if (res.finished) return;
      let v = this.picker.pick(cur, req);
      const d = decide(cur, v, req);
      if (d === NOT_MODIFIED) {
        res.status(304);
        writeHeaders(res, v.notModified);
        return res.end();
      }
      if (d === UNSATISFIABLE) {
        res.status(416);
        writeHeaders(res, cur.unsatisfiable);
        return res.end();
      }
      let start = 0;
      let end = cur.size - 1;
      if (d === PARTIAL) {
        v = cur.identity;
        start = range.start;
        end = range.end;
      } else if (v.file !== undefined) {
        // The variant's own file; gone or unreadable since loading: the identity bytes instead.
        const variant = await this.openInside(v.file);
        const vst = variant === undefined ? undefined : await variant.stat().catch(() => undefined);
        if (variant !== undefined && vst?.isFile()) {
          await fh.close().catch(() => {});
          fh = variant;
          end = vst.size - 1;
        } else {
          await variant?.close().catch(() => {});
          v = cur.identity;
        }
        if (res.finished) return;
      }
      writeHeaders(res, v.headers);
      if (d === PARTIAL) res.status(206).header('content-range', `bytes ${start}-${end}/${cur.size}`);
      if (end < start) return res.end(); // empty file
      handedOff = true;
      // A known length: Content-Length on GET (no chunked encoding), the exact length on HEAD.
      await res.stream(fh.createReadStream({ start, end }), { length: end - start + 1 });
    } finally {
      if (!handedOff) await fh.close().catch(() => {});
    }
  }

  /** Opens `abs` when its real path is still inside the root (no symlink swapped in since loading); undefined when gone. */
  private async openInside(abs: string): Promise<FileHandle | undefined> {
    try {
      const real = await realpath(abs);
      if (!this.files.inside(real)) return undefined;
      return await open(real, fsc.O_RDONLY | fsc.O_NOFOLLOW);
    } catch (err) {
      if (isErrno(err, 'ENOENT', 'ENOTDIR', 'ELOOP', 'EACCES')) return undefined;
      throw err;
    }
  }
}

/** Headers prepared (and checked) at load time: taken in one copy when nothing else set headers yet. */
function writeHeaders(res: Response, h: PreparedHeaders): void {
  res.setHeaders(h);
}

/** Without a `notFound` option (createStatic used on its own), misses are 404 HttpErrors. */
function throwNotFound(): never {
  throw new HttpError(404);
}
