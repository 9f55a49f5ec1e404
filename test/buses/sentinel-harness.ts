// Redis Sentinel for the fault tests (failover.test.ts, sentinel-outage.test.ts): a replica
// (--replicaof) and a sentinel (redis-server --sentinel) around a primary, on free ports.
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { RedisSentinelOptions } from '../../packages/redis/src/index.ts';
import { Broker, freePort } from './brokers.ts';
import { waitFor } from './fault-node.ts';

/** A redis-server in a role around `primary`: its replica, or a sentinel watching it. */
export class RoleBroker extends Broker {
  private readonly role: 'replica' | 'sentinel';
  private readonly primary: number;
  private constructor(port: number, role: 'replica' | 'sentinel', primary: number) {
    super(port);
    this.role = role;
    this.primary = primary;
  }
  static async start(role: 'replica' | 'sentinel', primary: number): Promise<RoleBroker> {
    return new RoleBroker(await freePort(), role, primary).start();
  }
  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }
  protected command(): [string, string[]] {
    if (this.role === 'replica') {
      const args = ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', this.dir];
      return ['redis-server', [...args, '--replicaof', '127.0.0.1', String(this.primary)]];
    }
    // One sentinel (quorum 1) monitoring the primary as `m`: down after 1 s, then its replica
    // promoted. It rewrites its config file as it learns the topology: it lives in the temp dir.
    const conf = join(this.dir, 'sentinel.conf');
    writeFileSync(
      conf,
      [
        `port ${this.port}`,
        'bind 127.0.0.1',
        `dir ${this.dir}`,
        `sentinel monitor m 127.0.0.1 ${this.primary} 1`,
        'sentinel down-after-milliseconds m 1000',
        'sentinel failover-timeout m 5000',
        '',
      ].join('\n'),
    );
    return ['redis-server', [conf, '--sentinel']];
  }
}

export const cli = (b: Broker, ...args: string[]) => execFileSync('redis-cli', ['-p', String(b.port), ...args], { encoding: 'utf8' });

/** A sentinel watching `primary` as `m` (and `replica` when given, known to it before this returns), and the option that points a client at it. */
export async function watch(primary: Broker, replica?: Broker): Promise<{ sentinel: RoleBroker; option: RedisSentinelOptions }> {
  if (replica !== undefined)
    await waitFor(() => cli(replica, 'info', 'replication').includes('master_link_status:up'), 'the replica follows the primary');
  const sentinel = await RoleBroker.start('sentinel', primary.port);
  if (replica !== undefined)
    await waitFor(() => cli(sentinel, 'sentinel', 'replicas', 'm').includes(String(replica.port)), 'the sentinel knows the replica');
  return { sentinel, option: { name: 'm', nodes: [{ host: '127.0.0.1', port: sentinel.port }] } };
}
