// `import adapter from '@tachyon/sveltekit'`: the SvelteKit adapter. `vite build` then
// writes build/index.js (`node build` starts a Tachyon server) and build/handler.js (the
// app as pieces to install in your own Tachyon app). See docs/sveltekit.md.
import { existsSync, writeFileSync } from 'node:fs';
import { relative } from 'node:path';
import { resolveAdapterOptions, type AdapterOptions } from './adapter/options.ts';
import { HOOKS_ENTRY, resolveHooksFile, tachyon, type VitePlugin } from './adapter/vite-plugin.ts';
import { devPlatform } from './adapter/dev.ts';
import { compileHooks } from './adapter/compile-hooks.ts';
import type { BuildConfig } from './runtime/kit.ts';
import type { Platform } from './runtime/platform.ts';

export type { AdapterOptions, WebSocketOptions } from './adapter/options.ts';
export type { Platform, Pressure } from './runtime/platform.ts';
export type { WsHooksModule } from './runtime/websocket.ts';
export { tachyon } from './adapter/vite-plugin.ts';

/** The parts of SvelteKit's Builder the adapter uses (identical in Kit 2 and Kit 3). */
interface KitConfig {
  appDir: string;
  paths: { base: string; origin?: string };
}

/**
 * What the adapter's own hooks.ws build reads of the kit config. Read loosely, not declared
 * in KitConfig: Kit 3's `files` has no `lib`, and a declared `files: { lib? }` made Kit 3's
 * Builder unassignable to this one (`sveltekit({ adapter: adapter() })` failed to type-check).
 */
function hooksBuildConfig(kit: KitConfig) {
  const k = kit as unknown as {
    alias?: Record<string, string>;
    files?: { lib?: unknown };
    env?: { publicPrefix?: unknown; privatePrefix?: unknown };
    version?: { name?: unknown };
  };
  const str = (v: unknown, fallback: string): string => (typeof v === 'string' ? v : fallback);
  return {
    lib: str(k.files?.lib, 'src/lib'),
    alias: typeof k.alias === 'object' && k.alias !== null ? k.alias : {},
    publicPrefix: str(k.env?.publicPrefix, 'PUBLIC_'),
    privatePrefix: str(k.env?.privatePrefix, ''),
    version: str(k.version?.name, ''),
  };
}

interface Builder {
  log: { minor(msg: string): void; warn(msg: string): void };
  /** Kit 3: the kit options themselves; Kit 2: `{ kit: … }` (reading `.kit` warns on Kit 3). */
  config: KitConfig | { kit: KitConfig };
  prerendered: { pages: Map<string, { file: string }> };
  rimraf(dir: string): void;
  mkdirp(dir: string): void;
  writeClient(dest: string): string[];
  writePrerendered(dest: string): string[];
  writeServer(dest: string): string[];
  /** Kit 2 (removed in Kit 3). */
  generateManifest?(opts: { relativePath: string }): string;
  /** Kit 3: writes a module exporting `server`, a ready SvelteKit Server instance. */
  generateServerInstance?(dest: string, opts?: { serverDirectory?: string }): void;
  compress(directory: string): Promise<unknown>;
  /** Kit ≥ 2.31: the app has a src/instrumentation.server.ts. */
  hasServerInstrumentationFile?(): boolean;
  /**
   * Kit ≥ 2.31: makes `entrypoint` import the instrumentation (and, on Kit 3, the initializer) before the app.
   * `initializer` is required as in Kit 3's Builder (Kit 2 ignores it): an optional one made
   * Kit 3's Builder unassignable here, so `sveltekit({ adapter: adapter() })` failed to type-check.
   */
  instrument?(args: {
    entrypoint: string;
    instrumentation: string;
    start?: string;
    initializer: string;
    module?: { exports: string[] };
  }): void;
  /** Kit 3: a module that fills `$env/dynamic/private` before the instrumentation runs. */
  createInstrumentationInitializer?(options: { outputDirectory: string; serverDirectory?: string }): string;
  /** Kit 3: content types of the client files by extension (`'.css'` → `'text/css'`), as the manifest records them. */
  readonly mimeTypes?: Record<string, string>;
}

/** Kit 2 has no builder.mimeTypes: its generated manifest carries `mimeTypes: {…}` as JSON. */
function mimeTypesOf(manifestSource: string): Record<string, string> | undefined {
  const m = /mimeTypes:\s*(\{[^{}]*\})/.exec(manifestSource);
  if (m === null) return undefined;
  try {
    return JSON.parse(m[1]!) as Record<string, string>;
  } catch {
    return undefined;
  }
}

/** Structurally a SvelteKit `Adapter` (Kit 2 and Kit 3). */
export interface TachyonAdapter {
  name: string;
  adapt(builder: Builder): Promise<void>;
  supports: { read(): boolean; instrumentation(): boolean };
  /** `Platform`, not `unknown`: Kit types the emulator's answer as App.Platform, which apps extend from it. */
  emulate(): { platform(): Platform };
  vite: { plugins: VitePlugin[] };
}

/**
 * src/instrumentation.server.ts (OpenTelemetry and the like) must run before any of the app's
 * code: SvelteKit rewrites both entry points into facades that import it first, then import
 * the real entry (moved to start.js / handler-start.js) and re-export what it exported.
 */
function instrument(builder: Builder, out: string): void {
  builder.log.minor('Instrumenting the entry points');
  const instrumentation = `${out}/server/instrumentation.server.js`;
  // Kit 3 only; on Kit 2 it stays undefined, a field Kit 2's instrument() does not read.
  const initializer = builder.createInstrumentationInitializer?.({
    outputDirectory: `${out}/server`,
    serverDirectory: `${out}/server`,
  }) as string;
  builder.instrument!({
    entrypoint: `${out}/index.js`,
    instrumentation,
    start: `${out}/start.js`,
    initializer,
    module: { exports: ['app', 'server', 'shutdown'] },
  });
  builder.instrument!({
    entrypoint: `${out}/handler.js`,
    instrumentation,
    start: `${out}/handler-start.js`,
    initializer,
    module: { exports: ['handler', 'install', 'env'] },
  });
}

export default function adapter(options?: AdapterOptions): TachyonAdapter {
  const o = resolveAdapterOptions(options);
  return {
    name: '@tachyon/sveltekit',
    async adapt(builder) {
      const out = o.out;
      const kit: KitConfig = 'paths' in builder.config ? builder.config : builder.config.kit;
      const { base, origin } = kit.paths;
      builder.rimraf(out);
      builder.mkdirp(out);

      builder.log.minor('Copying assets');
      builder.writeClient(`${out}/client${base}`);
      builder.writePrerendered(`${out}/prerendered${base}`);
      if (o.precompress) {
        // Brotli and gzip once, at build time: the server loads them beside each file.
        builder.log.minor('Compressing assets');
        await Promise.all([builder.compress(`${out}/client`), builder.compress(`${out}/prerendered`)]);
      }

      builder.log.minor('Writing server');
      builder.writeServer(`${out}/server`);
      let hooksBuilt = existsSync(`${out}/server/${HOOKS_ENTRY}.js`);
      const hooksFile = o.websocket && !hooksBuilt ? resolveHooksFile(process.cwd(), o.websocket.hooks) : undefined;
      if (hooksFile !== undefined) {
        // No tachyon() in vite.config.js (SvelteKit 2 with the adapter line alone): compile it here.
        builder.log.minor(
          `Compiling ${relative(process.cwd(), hooksFile)} (no tachyon() Vite plugin: modules it shares with the app are bundled again)`,
        );
        await compileHooks({
          root: process.cwd(),
          file: hooksFile,
          outDir: `${out}/server`,
          name: HOOKS_ENTRY,
          ...hooksBuildConfig(kit),
        });
        hooksBuilt = true;
      }

      const config: BuildConfig = {
        envPrefix: o.envPrefix,
        base,
        appDir: kit.appDir,
        origin: origin || undefined,
        precompress: o.precompress,
        wsPath: o.websocket && hooksBuilt ? o.websocket.path : false,
        lightWeb: o.lightWeb,
        prerendered: [...builder.prerendered.pages].map(([path, { file }]) => [path, file]),
        mimeTypes: undefined,
      };
      // build/server/tachyon-server.js exports `server`, SvelteKit's Server instance for this build.
      if (typeof builder.generateServerInstance === 'function') {
        builder.generateServerInstance(`${out}/server/tachyon-server.js`, { serverDirectory: `${out}/server` });
        config.mimeTypes = builder.mimeTypes;
      } else if (typeof builder.generateManifest === 'function') {
        const manifest = builder.generateManifest({ relativePath: './' });
        config.mimeTypes = mimeTypesOf(manifest);
        writeFileSync(
          `${out}/server/tachyon-server.js`,
          `import { Server } from './index.js';\n\nconst manifest = ${manifest};\n\nexport const server = new Server(manifest);\n`,
        );
      } else {
        throw new Error(
          '@tachyon/sveltekit: this SvelteKit version has neither builder.generateServerInstance (Kit 3) nor builder.generateManifest (Kit 2)',
        );
      }
      writeFileSync(`${out}/server/tachyon-config.js`, `export const config = ${JSON.stringify(config, null, 2)};\n`);
      const imports = [
        `import { server as kitServer } from './server/tachyon-server.js';`,
        `import { config } from './server/tachyon-config.js';`,
        config.wsPath !== false ? `import * as hooks from './server/${HOOKS_ENTRY}.js';` : `const hooks = null;`,
      ].join('\n');
      const built = `{ server: kitServer, config, hooks, dir: import.meta.dirname }`;
      writeFileSync(
        `${out}/index.js`,
        `// Generated by @tachyon/sveltekit: \`node ${out}\` starts the server (docs/sveltekit.md).\nimport { serve } from '@tachyon/sveltekit/runtime';\n${imports}\n\nexport const { app, server, shutdown } = await serve(${built});\n`,
      );
      writeFileSync(
        `${out}/handler.js`,
        `// Generated by @tachyon/sveltekit: the app for your own Tachyon App (docs/sveltekit.md).\n` +
          `//   install(app): static files, prerendered pages, the hooks.ws route and SSR\n` +
          `//   handler: SSR only, for app.mount(prefix, handler)\n` +
          `import { createKit } from '@tachyon/sveltekit/runtime';\n${imports}\n\nconst kit = await createKit(${built});\nexport const handler = kit.handler;\nexport const install = kit.install;\nexport const env = kit.env;\n`,
      );
      if (builder.hasServerInstrumentationFile?.() === true && typeof builder.instrument === 'function') instrument(builder, out);
    },
    supports: { read: () => true, instrumentation: () => true },
    // Undefined until the dev plugin has started its app (Kit then leaves event.platform unset).
    emulate: () => ({ platform: () => devPlatform() as Platform }),
    vite: { plugins: [tachyon(o)] },
  };
}
