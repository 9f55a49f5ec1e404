// `node build`: a Tachyon server for the built app, configured by adapter-node's
// environment variables. SIGINT/SIGTERM close it gracefully (in-flight requests finish,
// up to SHUTDOWN_TIMEOUT), then `sveltekit:shutdown` is emitted on `process`.
// With WORKERS (a number over 1, or 'auto' on a machine with several cores) the app runs on
// Tachyon's cluster(): build/index.js is run again in every worker thread, where this same
// function builds the worker's App (cluster() then never returns there).
import { availableParallelism } from 'node:os';
import { App, cluster, jsonLogger, type ClusterServer, type Server } from '@tachyon/server';
import { readEnv, type ServerEnv } from './env.ts';
import { createKit, type Built } from './kit.ts';

export interface Started {
  /** The App serving the SvelteKit app; undefined in the primary thread of a cluster (WORKERS: each worker has its own). */
  app: App | undefined;
  server: Server | ClusterServer;
  /** Starts the graceful shutdown (what SIGINT/SIGTERM do). */
  shutdown(reason?: string): Promise<void>;
}

/** The reason the workers of a cluster give `sveltekit:shutdown`: the signal reached the primary, not them. */
const WORKER_SHUTDOWN = 'SHUTDOWN';

function emitShutdown(reason: string): void {
  (process.emit as (event: string, ...args: unknown[]) => boolean)('sveltekit:shutdown', reason);
}

async function buildApp(built: Built, env: ServerEnv): Promise<App> {
  const kit = await createKit(built, env);
  const app = new App({
    logger: jsonLogger('warn'),
    bodyLimit: env.bodySizeLimit === Infinity ? Number.MAX_SAFE_INTEGER : env.bodySizeLimit,
    ...(env.sslCert !== undefined && env.sslKey !== undefined ? { tls: { cert: env.sslCert, key: env.sslKey } } : {}),
  });
  return kit.install(app);
}

export async function serve(built: Built): Promise<Started> {
  const env = readEnv(built.config.envPrefix, built.config.origin);
  const workers = env.workers === 'auto' ? availableParallelism() : env.workers;
  let app: App | undefined;
  let server: Server | ClusterServer;
  if (workers !== undefined && workers > 1) {
    server = await cluster(
      {
        workers,
        port: env.port,
        host: env.host,
        ...(env.sslCert !== undefined && env.sslKey !== undefined ? { tls: { cert: env.sslCert, key: env.sslKey } } : {}),
        // The signals are handled below, as without workers: exit 0 after sveltekit:shutdown.
        signals: false,
        shutdownTimeout: env.shutdownTimeout * 1000,
        logger: jsonLogger('warn'),
      },
      async () => {
        // In a worker: the app's code (hooks.server.ts) runs here, so its listeners are here too.
        const workerApp = await buildApp(built, env);
        return workerApp.onClose(() => emitShutdown(WORKER_SHUTDOWN));
      },
    );
  } else {
    app = await buildApp(built, env);
    server = await app.listen({ port: env.port, host: env.host });
  }
  const scheme = env.sslCert ? 'https' : 'http';
  const workersNote = app === undefined ? ` (${workers} workers)` : '';
  console.log(`Listening on ${scheme}://${env.host.includes(':') ? `[${env.host}]` : env.host}:${server.port}${workersNote}`);

  let closing: Promise<void> | undefined;
  const shutdown = (reason = 'SHUTDOWN'): Promise<void> => {
    closing ??= server.close({ timeout: env.shutdownTimeout * 1000 }).then(() => {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
      emitShutdown(reason);
    });
    return closing;
  };
  const onSignal = (signal: NodeJS.Signals): void => {
    void shutdown(signal);
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  return { app, server, shutdown };
}
