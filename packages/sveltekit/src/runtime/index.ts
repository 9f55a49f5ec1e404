// @tachyon/sveltekit/runtime: what build/index.js and build/handler.js import. Not meant
// to be called by hand; its shape may change with the files the adapter writes.
export { createKit, type Built, type BuildConfig, type Kit, type KitServer } from './kit.ts';
export { serve, type Started } from './serve.ts';
export { readEnv, parseBytes, type ServerEnv } from './env.ts';
export { behaviorFromHooks, installWebSocket, type WsHooksModule } from './websocket.ts';
export { platformFor, type Platform, type Pressure } from './platform.ts';
