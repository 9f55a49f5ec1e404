// The framework under test, through its public API only (the app: tachyon-app.mjs).
import { baseOptions, createApp } from './tachyon-app.mjs';
import { portFromEnv, ready } from './shared.mjs';

const port = portFromEnv();
// TACHYON_MIDDLEWARE (the tachyon-cors, tachyon-metrics, … peers): the built-in middleware
// whose cost they measure, installed app-wide in front of every route (middleware-peers.mjs).
const extras = process.env.TACHYON_MIDDLEWARE ? await import('./middleware-peers.mjs') : null;
const app = extras ? createApp(await extras.appOptions(baseOptions()), extras.install) : createApp();
const server = await app.listen({ port, host: '127.0.0.1' });
ready(server.port);
