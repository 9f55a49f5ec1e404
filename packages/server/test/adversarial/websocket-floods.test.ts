// WebSocket abuse: subscription floods, message floods, oversized frames. The server stays
// up, bounded, and answers with the documented reasons and close codes.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { App } from '../../src/index.ts';
import { sleep, start, type Running } from '../helpers.ts';

function open(url: string): Promise<WebSocket> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url);
    ws.onopen = () => resolve(ws);
    ws.onerror = () => reject(new Error('websocket failed to open'));
  });
}

describe('websocket floods', () => {
  let running: Running;
  let messages = 0;
  before(async () => {
    const app = new App();
    app.ws('/live', { maxSubscriptions: 50, maxPayloadLength: 4096, events: { count: { handler: () => ++messages } } });
    app.ws('/default', {});
    running = await start(app);
  });
  after(() => running.close());

  test('subscriptions past maxSubscriptions are denied with "too many subscriptions"', async () => {
    const ws = await open(`ws://127.0.0.1:${running.port}/live`);
    const answers: { type: string; reason?: string; topic: string }[] = [];
    ws.onmessage = (e) => answers.push(JSON.parse(String(e.data)));
    // 30 frames of 100 topics (each frame under the route's 4 KiB maxPayloadLength).
    for (let i = 0; i < 30; i++)
      ws.send(JSON.stringify({ type: 'subscribe', topics: Array.from({ length: 100 }, (_, j) => `t:${i}:${j}`), ref: i }));
    for (let i = 0; i < 100 && answers.length < 3000; i++) await sleep(20);
    assert.equal(answers.length, 3000);
    assert.equal(answers.filter((a) => a.type === 'subscribed').length, 50);
    assert.ok(answers.filter((a) => a.type === 'denied').every((a) => a.reason === 'too many subscriptions'));
    // Unsubscribing frees room again.
    answers.length = 0;
    ws.send(JSON.stringify({ type: 'unsubscribe', topic: 't:0:0' }));
    ws.send(JSON.stringify({ type: 'subscribe', topic: 'fresh', ref: 9 }));
    for (let i = 0; i < 50 && answers.length < 1; i++) await sleep(20);
    assert.equal(answers[0]?.type, 'subscribed');
    ws.close();
  });

  test('the default limit is 1000 per socket', async () => {
    const ws = await open(`ws://127.0.0.1:${running.port}/default`);
    let subscribed = 0;
    let denied = 0;
    ws.onmessage = (e) => (JSON.parse(String(e.data)).type === 'subscribed' ? subscribed++ : denied++);
    for (let i = 0; i < 2; i++)
      ws.send(JSON.stringify({ type: 'subscribe', topics: Array.from({ length: 1000 }, (_, j) => `d:${i}:${j}`), ref: i }));
    for (let i = 0; i < 100 && subscribed + denied < 2000; i++) await sleep(20);
    assert.deepEqual({ subscribed, denied }, { subscribed: 1000, denied: 1000 });
    ws.close();
  });

  test('a message flood is processed in order and the server stays responsive', async () => {
    const ws = await open(`ws://127.0.0.1:${running.port}/live`);
    messages = 0;
    let replies = 0;
    ws.onmessage = () => replies++;
    for (let i = 0; i < 20_000; i++) ws.send(`{"type":"event","event":"count","ref":${i}}`);
    const t0 = Date.now();
    const res = await fetch(`${running.url}/nothing-here`);
    assert.equal(res.status, 404, 'HTTP still answered during the flood');
    for (let i = 0; i < 250 && replies < 20_000; i++) await sleep(20);
    assert.equal(messages, 20_000);
    assert.equal(replies, 20_000);
    assert.ok(Date.now() - t0 < 5000);
    ws.close();
  });

  test('frames over maxPayloadLength close only that socket (1009; far over: cut, 1006)', async () => {
    const bystander = await open(`ws://127.0.0.1:${running.port}/live`);
    for (const [size, code] of [
      [5000, 1009],
      [1024 * 1024, 1006],
    ] as const) {
      const victim = await open(`ws://127.0.0.1:${running.port}/live`);
      const closed = new Promise<number>((resolve) => (victim.onclose = (e) => resolve(e.code)));
      victim.send('x'.repeat(size));
      assert.equal(await closed, code, `${size} bytes`);
    }
    const reply = new Promise<string>((resolve) => (bystander.onmessage = (e) => resolve(String(e.data))));
    bystander.send('{"type":"event","event":"count","ref":1}');
    assert.match(await reply, /"ref":1/);
    bystander.close();
  });
});
