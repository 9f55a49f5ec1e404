// onBeforeListen (docs/hooks.md): a plugin sees the address asked for before the socket binds,
// and may refuse it; listen() then rejects with the hook's error and nothing listens.
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { test } from 'node:test';
import { pickFreePort } from '../../src/app/free-port.ts';
import { App } from '../../src/index.ts';

const freePort = () => pickFreePort('127.0.0.1');

/** True when something accepts TCP connections on 127.0.0.1:port. */
function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => (socket.destroy(), resolve(true)));
    socket.once('error', () => resolve(false));
  });
}

test('onBeforeListen hooks run in order with the address asked for, before the socket binds', async () => {
  const port = await freePort();
  const app = new App();
  const seen: string[] = [];
  app.addHook('onReady', () => void seen.push('ready'));
  app.addHook('onBeforeListen', async ({ host, port: p }) => {
    seen.push(`first ${host}:${p === port} bound=${await listening(port)}`);
  });
  app.addHook('onBeforeListen', () => void seen.push('second'));
  app.addHook('onListen', async ({ port: p }) => void seen.push(`listening bound=${await listening(p)}`));
  await app.listen(port, '127.0.0.1');
  assert.deepEqual(seen, ['ready', 'first 127.0.0.1:true bound=false', 'second', 'listening bound=true']);
  await app.close();
});

test('a throwing onBeforeListen rejects listen() with its error; nothing listens; the app still closes', async () => {
  const port = await freePort();
  const app = new App();
  app.get('/hi', () => 'hi');
  const later: string[] = [];
  app.addHook('onBeforeListen', ({ host }) => {
    if (host !== '127.0.0.1') throw new Error(`my-plugin: refusing to listen on ${host}`);
  });
  app.addHook('onBeforeListen', () => void later.push('second ran'));
  app.addHook('onListen', () => void later.push('onListen ran'));
  await assert.rejects(app.listen(port, '0.0.0.0'), /^Error: my-plugin: refusing to listen on 0\.0\.0\.0$/);
  assert.equal(await listening(port), false);
  assert.deepEqual(later, [], 'the hooks after the refusal did not run');
  // Asked again on the address the plugin accepts, it listens.
  const server = await app.listen(port, '127.0.0.1');
  assert.equal(await (await fetch(`http://127.0.0.1:${server.port}/hi`)).text(), 'hi');
  await app.close();
});

test('a rejected promise refuses too; a scope may not take the hook; a bad hook is a clear error', async () => {
  const app = new App();
  app.addHook('onBeforeListen', async () => {
    throw new TypeError('not today');
  });
  await assert.rejects(app.listen(0, '127.0.0.1'), /not today/);
  await app.close();
  const other = new App();
  await assert.rejects(
    other.register(async (scope) => {
      (scope.addHook as (name: string, hook: () => void) => unknown)('onBeforeListen', () => {});
    }),
    /onBeforeListen/,
  );
  assert.throws(() => other.addHook('onBeforeListen', 'nope' as never), /onBeforeListen/);
});
