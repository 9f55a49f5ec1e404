// The Tachyon app (tachyon-app.mjs) on worker threads with cluster(), for bench/cluster.mjs.
// TACHYON_WORKERS: the number of worker threads (1 runs one worker thread behind the
// acceptor, not in-process: that is the cost of the cluster being measured).
import { cluster } from '@tachyon/server';
import { createApp } from './tachyon-app.mjs';
import { portFromEnv } from './shared.mjs';

const server = await cluster(
  { workers: Number(process.env.TACHYON_WORKERS ?? 1), forceThreads: true, port: portFromEnv(), host: '127.0.0.1', stallTimeout: 0 },
  createApp,
);
process.stdout.write(`READY ${server.port}\n`);
// Under the harness stdin is a pipe from it: if it dies without stopping us, close. (Not
// process.exit(): a thread that ends while uWS holds its sockets aborts the process.)
if (process.env.BENCH_HARNESS === '1') {
  process.stdin.on('end', () => void server.close({ timeout: 1000 }));
  process.stdin.on('error', () => void server.close({ timeout: 1000 }));
  process.stdin.resume();
}
