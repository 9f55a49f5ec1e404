// Subscriptions on history topics: last N, and what onSubscribed tells (recovered or not).
import { connect, type SubscribeInfo } from '../dist/index.js';

const live = connect<{ chat: { text: string } }>('ws://localhost/live');
live.subscribe('room:1', (event, data) => void [event, data.text], {
  last: 20,
  onSubscribed(info) {
    const r: boolean = info.recovered;
    const resumed: boolean = info.recovering;
    const offset: number | undefined = info.offset;
    const epoch: string | undefined = info.epoch;
    if (resumed && !r) void 'refetch the room';
    void [offset, epoch];
  },
});
live.on('room:1', 'chat', (d) => void d.text, { onSubscribed: (i: SubscribeInfo) => void i });
// @ts-expect-error last is a number
live.subscribe('room:1', () => {}, { last: 'all' });
