// socket.publish() from a socket subscribed to nothing: uWS 20.57 drops such a publish
// (returns false); Tachyon delivers it to the topic's subscribers anyway.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { connect } from '../../../client/src/index.ts';
import { App } from '../../src/index.ts';
import { sleep, start } from '../helpers.ts';

test('a socket subscribed to nothing can publish to a topic; the sender never gets its own message', async () => {
  const app = new App();
  const results: boolean[] = [];
  app.ws('/live', { events: { shout: { handler: (ws, data) => void results.push(ws.publish('room', 'shout', data)) } } });
  const running = await start(app);
  const listener = connect(`ws://127.0.0.1:${running.port}/live`);
  const talker = connect(`ws://127.0.0.1:${running.port}/live`);
  try {
    const listened: unknown[] = [];
    const talkerGot: unknown[] = [];
    listener.subscribe('room', (_e, d) => listened.push(d));
    await listener.ready;
    await talker.ready;
    await sleep(50);
    await talker.request('shout', { n: 1 });
    // Subscribed to the topic itself now: uWS's own publish path, which excludes the sender.
    talker.subscribe('room', (_e, d) => talkerGot.push(d));
    await sleep(50);
    await talker.request('shout', { n: 2 });
    await sleep(100);
    assert.deepEqual(results, [true, true]);
    assert.deepEqual(listened, [{ n: 1 }, { n: 2 }]);
    assert.deepEqual(talkerGot, []);
  } finally {
    listener.close();
    talker.close();
    await running.close();
  }
});
