// Watch mode (development): file system events are debounced, then the touched paths are
// reloaded into the table and the lookup table rebuilt. An event without a file name
// means "something changed": the whole tree is rescanned (unchanged files are kept).
import { stat } from 'node:fs/promises';
import { watch, type FSWatcher } from 'node:fs';
import { join, sep } from 'node:path';
import type { FileTable } from './load.ts';

const DEBOUNCE_MS = 50;

export class StaticWatcher {
  private readonly files: FileTable;
  private readonly watcher: FSWatcher;
  private readonly pending = new Set<string>();
  private rescanAll = false;
  private timer: NodeJS.Timeout | undefined;
  /** Reloads run one after the other. */
  private running: Promise<void> = Promise.resolve();
  private closed = false;

  constructor(files: FileTable) {
    this.files = files;
    this.watcher = watch(files.root, { recursive: true }, (_event, filename) => this.onEvent(filename));
    this.watcher.on('error', () => {
      // e.g. the directory itself was removed: keep serving what is loaded
    });
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.watcher.close();
  }

  private onEvent(filename: string | Buffer | null): void {
    if (this.closed) return;
    const rel = filename === null ? '' : String(filename).split(sep).join('/');
    if (rel === '') this.rescanAll = true;
    else this.pending.add(rel);
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = setTimeout(() => this.flush(), DEBOUNCE_MS);
  }

  private flush(): void {
    this.timer = undefined;
    const paths = [...this.pending];
    const all = this.rescanAll;
    this.pending.clear();
    this.rescanAll = false;
    this.running = this.running.then(() => this.apply(paths, all)).catch(() => {});
  }

  private async apply(paths: string[], all: boolean): Promise<void> {
    if (this.closed) return;
    const files = this.files;
    if (all) files.dropUnder('', await files.loadTree(files.root, ''));
    else {
      for (const rel of paths) {
        if (rel.split('/').some((name) => files.skips(name))) continue;
        const abs = join(files.root, rel);
        const st = await stat(abs).catch(() => undefined);
        if (st?.isFile()) await files.reloadFile(abs, rel);
        else if (st?.isDirectory()) files.dropUnder(rel, await files.loadTree(abs, rel));
        else files.drop(rel);
      }
    }
    if (!this.closed) files.rebuild();
  }
}
