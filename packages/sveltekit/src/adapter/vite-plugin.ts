// The adapter's Vite plugin. In `vite build` it adds `src/hooks.ws.ts` to SvelteKit's
// server build as one more entry (so it is compiled like the app's other server code:
// $lib, $env, TypeScript, shared modules). In `vite dev` it serves the same hooks on a
// Tachyon WebSocket route (dev.ts). Kit 3 installs it through `adapter.vite.plugins`;
// Kit 2 apps add `tachyon()` to vite.config.js themselves.
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { resolveAdapterOptions, type AdapterOptions, type ResolvedAdapterOptions } from './options.ts';
import { startDevRealtime, type DevServerLike } from './dev.ts';

/** Name of the hooks.ws entry in SvelteKit's server output (build/server/<name>.js). */
export const HOOKS_ENTRY = 'tachyon-hooks-ws';

const KIT_SERVER_INDEX = /[\\/]runtime[\\/]server[\\/]index\.js$/;

/** The subset of Vite's Plugin interface used here (keeps vite a type-free peer). */
export interface VitePlugin {
  name: string;
  configResolved?(config: { root: string; command: string }): void;
  /** Rollup's `input` option, typed as Rollup does: Vite's Plugin type must accept this hook. */
  options?(input: {
    input?: string | string[] | Record<string, string>;
  }): { input?: string | string[] | Record<string, string> } | null | undefined;
  configureServer?(server: DevServerLike): void | Promise<void>;
}

/** `src/hooks.ws` with or without extension → the existing file, or undefined. */
export function resolveHooksFile(root: string, hooks: string): string | undefined {
  const base = resolve(root, hooks);
  if (/\.[cm]?[jt]s$/.test(base)) return existsSync(base) ? base : undefined;
  for (const ext of ['.ts', '.js', '.mts', '.mjs']) if (existsSync(base + ext)) return base + ext;
  return undefined;
}

export function tachyon(options?: AdapterOptions | ResolvedAdapterOptions): VitePlugin {
  const o = resolveAdapterOptions(options as AdapterOptions);
  let root = process.cwd();
  return {
    name: '@tachyon/sveltekit',
    configResolved(config) {
      root = config.root;
    },
    options(input) {
      const ws = o.websocket;
      const entries = input.input;
      // SvelteKit's server build is the one whose `index` input is Kit's server runtime (Kit 2 and 3).
      if (!ws || typeof entries !== 'object' || entries === null || Array.isArray(entries)) return null;
      const index = entries.index;
      if (typeof index !== 'string' || !KIT_SERVER_INDEX.test(index)) return null;
      const file = resolveHooksFile(root, ws.hooks);
      if (file === undefined) return null;
      return { ...input, input: { ...entries, [HOOKS_ENTRY]: file } };
    },
    async configureServer(server) {
      if (o.websocket) await startDevRealtime(server, o.websocket);
    },
  };
}
