// Type tests: compiled by `tsc -p packages/sveltekit/test-types` against the built
// declarations (run `tsc -b packages/sveltekit` first). Every @ts-expect-error must be an error.
import adapter, { tachyon, type AdapterOptions, type Platform } from '../dist/index.js';
import type { App } from '@tachyon/server';

type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
const expectType = <T extends true>(_ok: T) => {};

adapter();
adapter({ out: 'dist', precompress: false, envPrefix: 'APP_', websocket: { path: '/live', hooks: 'src/realtime' } });
adapter({ websocket: false });
adapter({ lightWeb: false });
// @ts-expect-error: lightWeb is a boolean
adapter({ lightWeb: 'no' });
// @ts-expect-error: unknown option
adapter({ outDir: 'dist' });
// @ts-expect-error: precompress is a boolean
adapter({ precompress: 'yes' });
// @ts-expect-error: websocket is an object or false
adapter({ websocket: true });

const a = adapter();
expectType<Equal<typeof a.name, string>>(true);
a.vite.plugins.map((p) => p.name);
tachyon({ websocket: { path: '/ws' } });

const opts: AdapterOptions = { out: 'build' };
void opts;

// event.platform
declare const platform: Platform;
expectType<Equal<ReturnType<Platform['publish']>, boolean>>(true);
expectType<Equal<ReturnType<Platform['subscribers']>, number>>(true);
expectType<Equal<Platform['app'], App>>(true);
platform.publish('news', 'posted', { id: 1 });
// @ts-expect-error: an event name is required
platform.publish('news');
