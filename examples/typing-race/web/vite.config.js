import { sveltekit } from '@sveltejs/kit/vite';
import adapter from '@tachyon/sveltekit';
import { defineConfig } from 'vite';

// The race's pages (SvelteKit 3). The game's own WebSocket route (/ws) lives on the same
// Tachyon App (server.ts), so the adapter's hooks.ws route is off.
export default defineConfig({
  plugins: [sveltekit({ adapter: adapter({ websocket: false }) })],
  resolve: { dedupe: ['svelte'] },
  logLevel: 'warn',
});
