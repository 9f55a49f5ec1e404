// packages/client: the client's parser of server frames (onFrame/onMessage in index.ts), fed
// through the public connect() with a stand-in WebSocket. Properties: a frame never throws out of
// the socket's message callback; listeners get what their topic or event names; anything the
// client sends back (replies to server requests) is a JSON frame of a documented type; what
// reaches onError is a ClientError or the error a listener threw, nothing else.
import { ClientError, connect } from '../../packages/client/src/index.ts';
import { assert, onlyDocumented, timedAsync } from '../lib.mjs';

class StandIn {
  static last = null;
  sent = [];
  readyState = 1;
  constructor() {
    StandIn.last = this;
  }
  send(text) {
    this.sent.push(text);
  }
  close() {
    this.readyState = 3;
  }
}

export async function fuzz(data) {
  const errors = [];
  const live = connect('ws://fuzz.invalid/ws', { WebSocket: StandIn, timeout: 0, maxRetries: 0, onError: (e) => errors.push(e) });
  const ws = StandIn.last;
  const heard = [];
  live.subscribe('room', (event) => heard.push(['room', event]));
  live.on('h:1', 'move', () => heard.push(['h:1', 'move']), { last: 5 });
  live.onEvent('hello', () => heard.push([undefined, 'hello']));
  live.onMessage(() => {});
  live.handle('ask', (d) => d);
  live.handle('fail', () => {
    throw new Error('handler failed');
  });
  ws.onopen();
  const pinged = live.ping().catch(() => {});
  const text = data.toString('utf8');
  await timedAsync('client frame', async () => {
    ws.onmessage({ data: text });
    ws.onmessage({ data: data.buffer.slice(data.byteOffset, data.byteOffset + data.length) });
    // Replies to server requests settle on the next turns.
    await new Promise((resolve) => setImmediate(resolve));
  });
  for (const [topic, event] of heard) {
    assert(typeof event === 'string' && (topic === undefined || text.includes(topic)), 'a listener hears only its own topic');
  }
  for (const frame of ws.sent) {
    const m = JSON.parse(frame);
    assert(['subscribe', 'unsubscribe', 'event', 'ping', 'reply', 'presence'].includes(m.type), `documented frame type: ${m.type}`);
  }
  for (const e of errors) onlyDocumented(e, [ClientError, Error], (x) => x instanceof ClientError || x.message === 'handler failed');
  live.close();
  await pinged;
}
