// Type tests: natsBus() is a Bus for new App({ bus }), with typed options and counters.
import { App, type Bus, type BrokerBusStats } from '@tachyon/server';
import { natsBus, type NatsBusOptions } from '@tachyon/nats';

const bus = natsBus({ servers: 'nats://127.0.0.1:4222', prefix: 'chat', maxInFlight: 64 });
const asBus: Bus = bus;
new App({ bus });
new App({ bus: natsBus() });
const stats: BrokerBusStats = bus.stats();
const ready: boolean = bus.ready();
const options: NatsBusOptions = { servers: ['nats://a:4222', 'tls://b:4222'], connection: { user: 'u', pass: 'p' } };
natsBus(options);
// @ts-expect-error servers is a string or string[]
natsBus({ servers: 4222 });
// @ts-expect-error unknown option
natsBus({ url: 'nats://127.0.0.1:4222' });
void [asBus, stats, ready];
