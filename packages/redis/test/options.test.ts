// redisBus() options: bad ones throw at construction with a message naming the option.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { redisBus, redisHistory, redisRateLimitStore } from '../src/index.ts';

test('bad options are refused before anything connects', () => {
  const bad: [unknown, RegExp][] = [
    [{ url: 'http://localhost:6379' }, /redis:\/\/ or rediss:\/\//],
    [{ url: 'not a url' }, /not a URL/],
    [{ url: [] }, /url must be/],
    [{ url: ['redis://a:1', 'redis://b:1'] }, /need sharded: true/],
    [{ sharded: 'yes' }, /sharded must be a boolean/],
    [{ prefix: 'a"b' }, /prefix/],
    [{ prefix: 'app\n' }, /prefix/],
    [{ sharded: true, prefix: '{app}:' }, /hash tag/],
    [{ maxQueue: 0 }, /maxQueue must be a positive integer/],
    [{ maxInFlight: 1.5 }, /maxInFlight/],
    [{ presenceInterval: 1 }, /presenceInterval/],
    [{ stallTimeout: 50 }, /stallTimeout must be an integer >= 100 \(milliseconds\) or false/],
    [{ stallTimeout: true }, /stallTimeout/],
    [{ stallTimeout: '5s' }, /stallTimeout/],
    [{ logger: 'console' }, /logger/],
    [{ sentinel: 'mymaster' }, /^TypeError: redisBus\(\): sentinel must be an object: \{ name, nodes: \[\{ host, port \}\] \}$/],
    [{ sentinel: { name: '', nodes: [{ host: 'a', port: 1 }] } }, /sentinel name must be a non-empty string/],
    [{ sentinel: { name: 'm', nodes: [] } }, /sentinel nodes must be a non-empty array/],
    [
      { sentinel: { name: 'm', nodes: [{ host: 'a', port: 0 }] } },
      /sentinel nodes must be \{ host: string, port: 1..65535 \} \(got \{"host":"a","port":0\}\)/,
    ],
    [{ sentinel: { name: 'm', nodes: ['a:26379'] } }, /sentinel nodes must be/],
    [{ sentinel: { name: 'm', nodes: [{ host: 'a', port: 1 }], master: 'x' } }, /sentinel has an unknown option "master"/],
    [{ sentinel: { name: 'm', nodes: [{ host: 'a', port: 1 }] }, url: 'redis://a' }, /give url or sentinel, not both/],
    [{ sentinel: { name: 'm', nodes: [{ host: 'a', port: 1 }] }, sharded: true }, /sentinel watches one primary/],
    [
      { host: 'localhost' },
      /^TypeError: redisBus\(\): unknown option "host" \(known: url, sharded, prefix, client, sentinel, maxMessageSize, maxInFlight, maxQueue, maxQueueBytes, presenceInterval, stallTimeout, logger\)$/,
    ],
    [{ uri: 'redis://x' }, /^TypeError: redisBus\(\): unknown option "uri" \(did you mean "url"\?\)$/],
    [null, /options must be an object/],
  ];
  for (const [options, message] of bad) assert.throws(() => redisBus(options as never), message, JSON.stringify(options));
});

test('good options build a bus that is not ready before it starts', () => {
  const bus = redisBus({ url: 'rediss://user:secret@redis.example:6380/2', prefix: 'chat:', presenceInterval: false, maxQueue: 10 });
  assert.equal(bus.ready(), false);
  assert.equal(bus.subscribers('room'), undefined, 'no presence: no cluster-wide count');
  assert.equal(bus.stats().connected, false);
  assert.equal(bus.stats().stalled, false);
  assert.equal(redisBus({ stallTimeout: false }).stats().stalled, false);
});

test('redisHistory() and redisRateLimitStore() refuse unknown options, with the closest known one', () => {
  assert.throws(() => redisHistory({ prefx: 'h:' } as never), {
    message: 'redisHistory(): unknown option "prefx" (did you mean "prefix"?)',
  });
  assert.throws(() => redisHistory({ sentinel: { name: 'm', nodes: [] } }), /^TypeError: redisHistory\(\): sentinel nodes must be/);
  assert.throws(
    () => redisHistory({ sentinel: { name: 'm', nodes: [{ host: 'a', port: 1 }] }, url: 'redis://a' }),
    /give url or sentinel, not both/,
  );
  assert.throws(() => redisRateLimitStore({ clint: {} } as never), {
    message: 'redisRateLimitStore(): unknown option "clint" (did you mean "client"?)',
  });
  assert.throws(() => redisRateLimitStore({ window: 1 } as never), {
    message: 'redisRateLimitStore(): unknown option "window" (known: url, sentinel, prefix, client, timeout)',
  });
});
