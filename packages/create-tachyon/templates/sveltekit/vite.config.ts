import { sveltekit } from '@sveltejs/kit/vite';
import adapter from '@tachyon/sveltekit';
import { defineConfig } from 'vite';

// SvelteKit 3: the configuration lives here. The adapter brings its own Vite plugin: it
// compiles src/hooks.ws.ts into the WebSocket route /ws, in `vite dev` and in `vite build`.
export default defineConfig({
  plugins: [sveltekit({ adapter: adapter() })],
});
