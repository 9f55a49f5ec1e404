// The same app, three adapters: BENCH_ADAPTER=tachyon|node|uws picks one and its output directory.
import node from '@sveltejs/adapter-node';
import tachyon from '@tachyon/sveltekit';
import uws from 'svelte-adapter-uws';

const which = process.env.BENCH_ADAPTER ?? 'tachyon';
const adapters = {
	tachyon: () => tachyon({ out: 'build-tachyon' }),
	node: () => node({ out: 'build-node' }),
	uws: () => uws({ out: 'build-uws' })
};
if (!(which in adapters)) throw new Error(`BENCH_ADAPTER must be one of ${Object.keys(adapters).join(', ')}`);

export default { kit: { adapter: adapters[which]() } };
