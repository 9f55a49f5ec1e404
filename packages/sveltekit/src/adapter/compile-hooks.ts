// src/hooks.ws compiled by the adapter itself, for apps whose Vite config lacks the tachyon()
// plugin (SvelteKit 2 adapters cannot add Vite plugins: `adapter: adapter()` alone must
// build, as with adapter-node). The bundler is the app's own Vite (Rollup in Vite 7,
// Rolldown in Vite 8), run as a second SSR build of that one file, with what SvelteKit's
// server build would give it: TypeScript, `$lib` and the configured aliases, `$env/*` and
// `$app/environment`. Packages stay external (imported from node_modules at run time).
// Unlike the plugin build, modules shared with the app are bundled into this file again
// (a second instance): the plugin remains the better build, and is required for `vite dev`.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

/** The parts of Vite's API used here (vite is the app's, not a dependency of this package). */
interface ViteLike {
  version: string;
  build(config: Record<string, unknown>): Promise<unknown>;
  loadEnv(mode: string, dir: string, prefixes: string | string[]): Record<string, string>;
}

export interface CompileHooksOptions {
  /** Project root (where vite.config.js is). */
  root: string;
  /** The hooks file (absolute). */
  file: string;
  /** Output directory (build/server) and entry name: writes `<outDir>/<name>.js`. */
  outDir: string;
  name: string;
  /** kit.files.lib (Kit 2) or src/lib. */
  lib: string;
  /** kit.alias: `{ $db: 'src/db', '$db/*': 'src/db/*' }`. */
  alias: Record<string, string>;
  /** kit.env.publicPrefix / privatePrefix. */
  publicPrefix: string;
  privatePrefix: string;
  /** kit.version.name, for `$app/environment`'s `version`. */
  version: string;
}

/** The Vite the app builds with, resolved from the project (as its vite.config.js would import it). */
async function appVite(root: string): Promise<ViteLike> {
  const require = createRequire(join(root, 'package.json'));
  let pkgPath: string;
  try {
    pkgPath = require.resolve('vite/package.json');
  } catch {
    throw new Error(`@tachyon/sveltekit: cannot compile src/hooks.ws: vite is not installed in ${root}`);
  }
  const pkg = JSON.parse(readFileSync(pkgPath, 'utf8')) as { exports?: Record<string, unknown> };
  const file = esmEntry(pkg.exports?.['.']);
  if (file === undefined) throw new Error(`@tachyon/sveltekit: cannot find the ESM entry of vite (${pkgPath})`);
  return (await import(pathToFileURL(resolve(dirname(pkgPath), file)).href)) as ViteLike;
}

/** `"./x.js"`, `{ import: "./x.js" }`, `{ import: { default: "./x.js" } }` or `{ default: … }`. */
function esmEntry(spec: unknown): string | undefined {
  if (typeof spec === 'string') return spec;
  if (typeof spec !== 'object' || spec === null) return undefined;
  const conditions = spec as Record<string, unknown>;
  return esmEntry(conditions.import ?? conditions.default);
}

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;
const VIRTUAL = '\0tachyon-kit:';

/** `$env/*` and `$app/environment` as SvelteKit's server build defines them, for one module outside it. */
function kitModules(o: CompileHooksOptions, staticEnv: Record<string, string>) {
  const pick = (isPublic: boolean): string => {
    const lines = Object.entries(staticEnv)
      .filter(
        ([k]) =>
          IDENTIFIER.test(k) && (isPublic ? k.startsWith(o.publicPrefix) : k.startsWith(o.privatePrefix) && !k.startsWith(o.publicPrefix)),
      )
      .map(([k, v]) => `export const ${k} = ${JSON.stringify(v)};`);
    return lines.join('\n') || 'export {};';
  };
  const sources: Record<string, string> = {
    '$env/static/private': pick(false),
    '$env/static/public': pick(true),
    // Read at run time, from the server's environment (what SvelteKit's server.init() fills in).
    '$env/dynamic/private': `export const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => k.startsWith(${JSON.stringify(o.privatePrefix)}) && !k.startsWith(${JSON.stringify(o.publicPrefix)})));`,
    '$env/dynamic/public': `export const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => k.startsWith(${JSON.stringify(o.publicPrefix)})));`,
    '$app/environment': `export const browser = false;\nexport const dev = false;\nexport const building = false;\nexport const version = ${JSON.stringify(o.version)};`,
  };
  return {
    name: '@tachyon/sveltekit:hooks-ws-kit-modules',
    enforce: 'pre',
    resolveId(id: string) {
      if (id in sources) return VIRTUAL + id;
      if (id.startsWith('$app/') || id.startsWith('$env/') || id.startsWith('$service-worker'))
        throw new Error(
          `@tachyon/sveltekit: src/hooks.ws imports ${id}, which only SvelteKit's own build provides: ` +
            `add the plugin to vite.config.js (import { tachyon } from '@tachyon/sveltekit'; plugins: [sveltekit(), tachyon()])`,
        );
      return null;
    },
    load(id: string) {
      return id.startsWith(VIRTUAL) ? sources[id.slice(VIRTUAL.length)] : null;
    },
  };
}

/** kit.alias and $lib as Vite aliases (`'$db/*': 'src/db/*'` and `$db: 'src/db'` both mean the directory). */
function aliases(o: CompileHooksOptions): { find: RegExp; replacement: string }[] {
  const all: Record<string, string> = { ...o.alias, $lib: o.lib };
  const out: { find: RegExp; replacement: string }[] = [];
  for (const [key, value] of Object.entries(all)) {
    const name = key.replace(/\/\*$/, '');
    const target = resolve(o.root, value.replace(/\/\*$/, ''));
    const escaped = name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    out.push({ find: new RegExp(`^${escaped}(?=/|$)`), replacement: target });
  }
  // Longest first: `$lib/server` before `$lib`.
  return out.sort((a, b) => b.find.source.length - a.find.source.length);
}

export async function compileHooks(o: CompileHooksOptions): Promise<void> {
  const vite = await appVite(o.root);
  const staticEnv = vite.loadEnv('production', o.root, '');
  const rolldown = Number.parseInt(vite.version, 10) >= 8;
  const output = { format: 'es', entryFileNames: `${o.name}.js`, chunkFileNames: `${o.name}-[hash].js` };
  await vite.build({
    configFile: false,
    root: o.root,
    mode: 'production',
    logLevel: 'warn',
    publicDir: false,
    resolve: { alias: aliases(o) },
    plugins: [kitModules(o, staticEnv)],
    build: {
      ssr: o.file,
      outDir: o.outDir,
      emptyOutDir: false,
      copyPublicDir: false,
      minify: false,
      sourcemap: false,
      reportCompressedSize: false,
      [rolldown ? 'rolldownOptions' : 'rollupOptions']: { output },
    },
  });
}
