// Type tests: redisBus() is a Bus for new App({ bus }), with typed options and counters.
import { App, cluster, type Bus, type BrokerBusStats } from '@tachyon/server';
import { redisBus, type RedisBusOptions, type RedisSentinelOptions } from '@tachyon/redis';

const bus = redisBus({ url: 'redis://127.0.0.1:6379', sharded: true, prefix: 'chat:', maxQueue: 100, presenceInterval: false });
const asBus: Bus = bus;
new App({ bus });
new App({ bus: redisBus() });
const stats: BrokerBusStats = bus.stats();
const stalled: boolean = stats.stalled;
redisBus({ stallTimeout: 2000 });
redisBus({ stallTimeout: false });
// @ts-expect-error stallTimeout is milliseconds or false
redisBus({ stallTimeout: '5s' });
const ready: boolean = bus.ready();
const n: number | undefined = bus.subscribers('room');
const options: RedisBusOptions = { url: ['redis://a:7000', 'redis://b:7000'], sharded: true, client: { username: 'u', password: 'p' } };
redisBus(options);
// @ts-expect-error sharded is a boolean
redisBus({ sharded: 'yes' });
// @ts-expect-error unknown option
redisBus({ host: 'localhost' });
// @ts-expect-error url is a string or string[]
redisBus({ url: 6379 });
// Redis Sentinel: the monitored primary's name and some sentinels.
const sentinel: RedisSentinelOptions = { name: 'mymaster', nodes: [{ host: 's1', port: 26379 }] };
redisBus({ sentinel, client: { password: 'p' } });
// @ts-expect-error the sentinel needs the primary's name
redisBus({ sentinel: { nodes: [{ host: 's1', port: 26379 }] } });
void [asBus, stats, stalled, ready, n];

// With cluster(): a bus per worker (the App's), or one held by the primary (cluster's).
await cluster({ workers: 2 }, () => new App({ bus: redisBus() }));
await cluster({ workers: 2, bus: redisBus() }, () => new App());
// @ts-expect-error cluster's bus is a Bus, not a name
await cluster({ workers: 2, bus: 'redis' }, () => new App());
