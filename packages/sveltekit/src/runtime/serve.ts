// `node build`: a Tachyon server for the built app, configured by adapter-node's
// environment variables. SIGINT/SIGTERM close it gracefully (in-flight requests finish,
// up to SHUTDOWN_TIMEOUT), then `sveltekit:shutdown` is emitted on `process`.
import { App, jsonLogger, type Server } from '@tachyon/server';
import { createKit, type Built } from './kit.ts';

export interface Started {
  app: App;
  server: Server;
  /** Starts the graceful shutdown (what SIGINT/SIGTERM do). */
  shutdown(reason?: string): Promise<void>;
}

export async function serve(built: Built): Promise<Started> {
  const kit = await createKit(built);
  const env = kit.env;
  const app = new App({
    logger: jsonLogger('warn'),
    bodyLimit: env.bodySizeLimit === Infinity ? Number.MAX_SAFE_INTEGER : env.bodySizeLimit,
    ...(env.sslCert !== undefined && env.sslKey !== undefined ? { tls: { cert: env.sslCert, key: env.sslKey } } : {}),
  });
  kit.install(app);
  const server = await app.listen({ port: env.port, host: env.host });
  const scheme = env.sslCert ? 'https' : 'http';
  console.log(`Listening on ${scheme}://${env.host.includes(':') ? `[${env.host}]` : env.host}:${server.port}`);

  let closing: Promise<void> | undefined;
  const shutdown = (reason = 'SHUTDOWN'): Promise<void> => {
    closing ??= server.close({ timeout: env.shutdownTimeout * 1000 }).then(() => {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
      (process.emit as (event: string, ...args: unknown[]) => boolean)('sveltekit:shutdown', reason);
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
