// The file table: walks the directory, reads every file up to the memory threshold (with
// its brotli/gzip variants and validators, see entry.ts) and keeps the lookup table the
// request handler reads. Only regular files whose real path is inside the root are
// loaded; symlinks are followed only when they stay inside it.
import { readdir, readFile, realpath, stat } from 'node:fs/promises';
import { hash } from 'node:crypto';
import { join, resolve, sep } from 'node:path';
import { promisify } from 'node:util';
import { brotliCompress, gzip } from 'node:zlib';
import { precompressBrotliOptions, PRECOMPRESS_GZIP_OPTIONS } from '../../http/compressors.ts';
import { buildEntry, type Entry, type Source } from './entry.ts';
import { isTextual, mimeInfo, type MimeInfo } from './mime.ts';
import { internBytes, type LoadedBytes } from './shared-bytes.ts';
import type { StaticConfig } from './options.ts';

const LOAD_CONCURRENCY = 8;
/** Smaller bodies are never worth a compressed variant. */
const MIN_COMPRESS_SIZE = 32;

const brotliAsync = promisify(brotliCompress);
const gzipAsync = promisify(gzip);

interface Listed {
  abs: string;
  rel: string;
}

export class FileTable {
  readonly root: string;
  private readonly rootPrefix: string;
  private readonly c: StaticConfig;
  /** Every loaded file by its path relative to the root ('/'-separated). */
  private readonly files = new Map<string, Entry>();
  /** What requests look up: `files` plus the index-file aliases. Replaced whole on rebuild. */
  private table = new Map<string, Entry>();
  /** The SPA fallback, with `Vary: Accept` in its headers. */
  private fallbackEntry: Entry | undefined;

  private constructor(root: string, c: StaticConfig) {
    this.root = root;
    this.rootPrefix = root.endsWith(sep) ? root : root + sep;
    this.c = c;
  }

  /** Resolves `dir` (following symlinks) and loads everything under it. */
  static async load(dir: string, c: StaticConfig): Promise<FileTable> {
    const root = await realpath(resolve(dir));
    if (!(await stat(root)).isDirectory()) throw new TypeError(`Not a directory: ${dir}`);
    const t = new FileTable(root, c);
    await t.loadTree(root, '');
    t.rebuild();
    if (c.fallback !== undefined && t.fallbackEntry === undefined && !c.watch) {
      throw new TypeError(`Static fallback file not found in ${dir}: ${c.fallback}`);
    }
    return t;
  }

  get size(): number {
    return this.files.size;
  }

  lookup(path: string): Entry | undefined {
    return this.table.get(path);
  }

  get fallback(): Entry | undefined {
    return this.fallbackEntry;
  }

  /** A real path inside the root (not the root itself). */
  inside(real: string): boolean {
    return real.startsWith(this.rootPrefix);
  }

  /** Names never loaded: dotfiles unless `dotfiles: 'allow'`. */
  skips(name: string): boolean {
    return this.c.dotfiles !== 'allow' && name.startsWith('.');
  }

  /** Builds the entry of a file whose size or mtime changed since it was loaded (large files, served from disk). */
  refreshed(e: Entry, size: number, mtimeMs: number, extraVary: string | undefined): Entry {
    return buildEntry({ ...e.src, size, mtimeMs }, this.c, extraVary);
  }

  /** Loads (or reloads) every file under `absDir`; returns the relative paths now loaded there. */
  async loadTree(absDir: string, relDir: string): Promise<Set<string>> {
    let list: Listed[] = [];
    await this.listFiles(absDir, relDir, new Set(), list);
    if (this.c.precompressed) {
      // `app.js.br` next to `app.js` is app.js's brotli variant, not a file of its own.
      const names = new Set(list.map((f) => f.rel));
      list = list.filter(({ rel }) => !(/\.(br|gz)$/.test(rel) && names.has(rel.slice(0, -3))));
    }
    const seen = new Set<string>();
    await pool(list, async ({ abs, rel }) => {
      const prev = this.files.get(rel);
      if (prev !== undefined) {
        // Unchanged since loaded (watch mode rescans): keep it.
        try {
          const st = await stat(abs);
          if (st.size === prev.src.size && st.mtimeMs === prev.src.mtimeMs) {
            seen.add(rel);
            return;
          }
        } catch {
          return;
        }
      }
      const e = await this.loadFile(abs, rel);
      if (e !== undefined) {
        this.files.set(rel, e);
        seen.add(rel);
      }
    });
    return seen;
  }

  /** Reloads one file: kept when it is still a loadable file, dropped otherwise. */
  async reloadFile(abs: string, rel: string): Promise<void> {
    const e = await this.loadFile(abs, rel).catch(() => undefined);
    if (e !== undefined) this.files.set(rel, e);
    else this.files.delete(rel);
  }

  /** Drops loaded files under `relDir` ('' for all) that are not in `keep`. */
  dropUnder(relDir: string, keep: Set<string>): void {
    const prefix = relDir === '' ? '' : relDir + '/';
    for (const key of [...this.files.keys()]) if (key.startsWith(prefix) && !keep.has(key)) this.files.delete(key);
  }

  /** Drops a file, or everything under a directory. */
  drop(rel: string): void {
    this.files.delete(rel);
    this.dropUnder(rel, new Set());
  }

  /** Rebuilds the lookup table: every file by its path, plus `dir`, `dir/` (and '' for the root) for index files. */
  rebuild(): void {
    const c = this.c;
    const next = new Map<string, Entry>();
    for (const [rel, e] of this.files) next.set(rel, e);
    if (c.index !== false) {
      for (const [rel, e] of this.files) {
        const slash = rel.lastIndexOf('/');
        if (rel.slice(slash + 1) !== c.index) continue;
        const dirKey = slash === -1 ? '' : rel.slice(0, slash);
        if (dirKey === '') next.set('', e);
        else {
          if (!next.has(dirKey)) next.set(dirKey, e);
          next.set(dirKey + '/', e);
        }
      }
    }
    const fb = c.fallback === undefined ? undefined : this.files.get(c.fallback);
    this.fallbackEntry = fb === undefined ? undefined : buildEntry(fb.src, c, 'Accept');
    this.table = next;
  }

  /** Reads one file (or records a large one). Undefined when it is not a regular file inside the root. */
  private async loadFile(abs: string, rel: string): Promise<Entry | undefined> {
    const c = this.c;
    let real: string;
    try {
      real = await realpath(abs);
    } catch {
      return undefined; // gone, or a broken symlink
    }
    if (!this.inside(real)) return undefined;
    let st;
    const info = mimeInfo(rel, c.types);
    let loaded: LoadedBytes | undefined;
    try {
      st = await stat(real);
      if (!st.isFile()) return undefined;
      if (st.size <= c.threshold) {
        // Shared between cluster workers when a store is installed (shared-bytes.ts), keyed by
        // the file's identity and version: the other workers need not even read it.
        const variants = c.precompressed ? 'files' : c.precompress && info.compressible ? info.type : '';
        loaded = await internBytes(`${real}\0${st.dev}:${st.ino}\0${st.size}\0${st.mtimeMs}\0${variants}`, () => readBytes(real, info, c));
      }
    } catch (err) {
      if (isErrno(err, 'ENOENT', 'ENOTDIR')) return undefined; // removed while we were loading
      throw err;
    }
    const src: Source = {
      rel,
      abs,
      mime: info,
      size: st.size,
      mtimeMs: st.mtimeMs,
      body: undefined,
      hash: '',
      br: undefined,
      gzip: undefined,
    };
    if (loaded !== undefined && loaded.body.length <= c.threshold /* it may have grown meanwhile */) {
      src.body = loaded.body;
      src.size = loaded.body.length;
      src.hash = loaded.hash;
      src.br = loaded.br;
      src.gzip = loaded.gzip;
    } else if (c.precompressed) {
      // Streamed from disk: so are its build-time variants (only their size is checked here).
      src.brFile = await smallerSibling(real + '.br', st.size);
      src.gzipFile = await smallerSibling(real + '.gz', st.size);
    }
    return buildEntry(src, c, undefined);
  }

  /** Lists the regular files (and symlinks to files inside the root) under a directory. */
  private async listFiles(absDir: string, relDir: string, visited: Set<string>, out: Listed[]): Promise<void> {
    let realDir: string;
    try {
      realDir = await realpath(absDir);
    } catch {
      return;
    }
    if (visited.has(realDir) || !(realDir === this.root || this.inside(realDir))) return;
    visited.add(realDir);
    let dirents;
    try {
      dirents = await readdir(absDir, { withFileTypes: true });
    } catch (err) {
      if (isErrno(err, 'ENOENT', 'ENOTDIR', 'EACCES')) return;
      throw err;
    }
    for (const d of dirents) {
      if (this.skips(d.name) || d.name.includes('\\')) continue;
      const abs = join(absDir, d.name);
      const rel = relDir === '' ? d.name : `${relDir}/${d.name}`;
      if (d.isDirectory()) await this.listFiles(abs, rel, visited, out);
      else if (d.isFile()) out.push({ abs, rel });
      else if (d.isSymbolicLink()) {
        try {
          const target = await stat(abs);
          if (target.isDirectory()) await this.listFiles(abs, rel, visited, out);
          else if (target.isFile()) out.push({ abs, rel });
        } catch {
          // broken link
        }
      }
    }
  }
}

/** A file's body, its hash, and its brotli and gzip variants (each only when smaller than the body). */
async function readBytes(real: string, info: MimeInfo, c: StaticConfig): Promise<LoadedBytes> {
  const body = await readFile(real);
  const loaded: LoadedBytes = { body, hash: hash('sha1', body, 'base64url').slice(0, 16), br: undefined, gzip: undefined };
  if (c.precompressed) return readVariants(loaded, real);
  if (body.length > c.threshold || !c.precompress || !info.compressible || body.length < MIN_COMPRESS_SIZE) return loaded;
  const [br, gz] = await Promise.all([
    brotliAsync(body, precompressBrotliOptions(body.length, isTextual(info))),
    gzipAsync(body, PRECOMPRESS_GZIP_OPTIONS),
  ]);
  if (br.length < body.length) loaded.br = br;
  if (gz.length < body.length) loaded.gzip = gz;
  return loaded;
}

/** Takes the build's `<file>.br` and `<file>.gz` as the variants, each only when smaller than the body. */
async function readVariants(loaded: LoadedBytes, real: string): Promise<LoadedBytes> {
  const read = (path: string) =>
    readFile(path).catch((err: unknown) => (isErrno(err, 'ENOENT', 'EISDIR') ? undefined : Promise.reject(err)));
  const [br, gz] = await Promise.all([read(real + '.br'), read(real + '.gz')]);
  if (br !== undefined && br.length < loaded.body.length) loaded.br = br;
  if (gz !== undefined && gz.length < loaded.body.length) loaded.gzip = gz;
  return loaded;
}

/** `path` when it is a regular file smaller than `size` (a variant worth sending), else undefined. */
async function smallerSibling(path: string, size: number): Promise<string | undefined> {
  try {
    const st = await stat(path);
    return st.isFile() && st.size < size ? path : undefined;
  } catch {
    return undefined;
  }
}

/** Runs `fn` over `items` with bounded concurrency. */
async function pool<T>(items: T[], fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await fn(items[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(LOAD_CONCURRENCY, items.length) }, worker));
}

export function isErrno(err: unknown, ...codes: string[]): boolean {
  return codes.includes((err as NodeJS.ErrnoException | null)?.code ?? '');
}
