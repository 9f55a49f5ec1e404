import { sveltekit } from '@sveltejs/kit/vite';
import { tachyon } from '@tachyon/sveltekit';
import uws from 'svelte-adapter-uws/vite';

const which = process.env.BENCH_ADAPTER ?? 'tachyon';
export default {
	plugins: [sveltekit(), ...(which === 'tachyon' ? [tachyon()] : which === 'uws' ? [uws()] : [])],
	logLevel: 'warn'
};
