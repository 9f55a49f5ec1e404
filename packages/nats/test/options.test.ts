// natsBus() options and the topic → subject mapping.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { natsBus } from '../src/index.ts';
import { topicToken } from '../src/options.ts';

test('bad options are refused before anything connects', () => {
  const bad: [unknown, RegExp][] = [
    [{ servers: [] }, /servers must be/],
    [{ servers: 4222 }, /servers must be/],
    [{ prefix: 'a b' }, /prefix/],
    [{ prefix: 'a.*' }, /prefix/],
    [{ prefix: 'a..b' }, /prefix/],
    [{ maxMessageSize: -1 }, /maxMessageSize/],
    [
      { url: 'nats://x' },
      /^TypeError: natsBus\(\): unknown option "url" \(known: servers, prefix, connection, maxMessageSize, maxInFlight, maxQueue, maxQueueBytes, presenceInterval, stallTimeout, logger\)$/,
    ],
    [{ server: 'nats://x' }, /^TypeError: natsBus\(\): unknown option "server" \(did you mean "servers"\?\)$/],
    [{ maxqueue: 5 }, /^TypeError: natsBus\(\): unknown option "maxqueue" \(did you mean "maxQueue"\?\)$/],
    [{ connection: 'x' }, /connection must be an object/],
  ];
  for (const [options, message] of bad) assert.throws(() => natsBus(options as never), message, JSON.stringify(options));
});

test('every topic maps to one subject without wildcards; distinct topics to distinct subjects', () => {
  assert.equal(topicToken('room:1'), 'room:1');
  assert.equal(topicToken('a.b'), 'a.b');
  const odd = ['*', '>', 'a b', 'a..b', '.a', 'a.', 'x.*', 'rooms>', '~x', 'a  b'];
  const tokens = odd.map(topicToken);
  for (const t of tokens) assert.match(t, /^~[A-Za-z0-9_-]+$/);
  assert.equal(new Set(tokens).size, odd.length);
  assert.notEqual(topicToken('~x'), '~x', 'the escape character itself is escaped');
});
