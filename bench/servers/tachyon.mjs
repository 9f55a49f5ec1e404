// The framework under test, through its public API only (the app: tachyon-app.mjs).
import { createApp } from './tachyon-app.mjs';
import { portFromEnv, ready } from './shared.mjs';

const port = portFromEnv();
const app = createApp();
const server = await app.listen({ port, host: '127.0.0.1' });
ready(server.port);
