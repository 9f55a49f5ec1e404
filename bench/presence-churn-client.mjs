// bench/presence.mjs's churn load: CONNECTIONS sockets, each in a loop of one subscribe
// frame for TOPICS topics, one unsubscribe frame for the same topics, and a ping (a barrier:
// the pong comes after the server handled both). Prints {"ops_per_s": …} where an op is one
// topic subscribed or unsubscribed, counted after the warm-up.
//   node bench/presence-churn-client.mjs URL CONNECTIONS TOPICS WARMUP_S DURATION_S
const [url, connections, topics, warmupS, durationS] = process.argv.slice(2);
const C = Number(connections);
const T = Number(topics);
let counting = false;
let ops = 0;
let running = true;

async function loop(c) {
  const ws = new WebSocket(url);
  await new Promise((resolve, reject) => {
    ws.onopen = resolve;
    ws.onerror = reject;
  });
  const list = Array.from({ length: T }, (_, i) => `churn:${c}-${i}`);
  const sub = JSON.stringify({ type: 'subscribe', topics: list });
  const unsub = JSON.stringify({ type: 'unsubscribe', topics: list });
  const ping = JSON.stringify({ type: 'ping', ref: 1 });
  let wake;
  ws.onmessage = (e) => {
    if (String(e.data).startsWith('{"type":"pong"')) wake();
    else if (String(e.data).startsWith('{"type":"denied"') || String(e.data).startsWith('{"type":"error"')) throw new Error(String(e.data));
  };
  while (running) {
    const pong = new Promise((r) => (wake = r));
    ws.send(sub);
    ws.send(unsub);
    ws.send(ping);
    await pong;
    if (counting) ops += 2 * T;
  }
  ws.close();
}

const loops = Array.from({ length: C }, (_, c) => loop(c));
await new Promise((r) => setTimeout(r, Number(warmupS) * 1000));
counting = true;
const start = performance.now();
await new Promise((r) => setTimeout(r, Number(durationS) * 1000));
counting = false;
const seconds = (performance.now() - start) / 1000;
running = false;
await Promise.all(loops);
console.log(JSON.stringify({ ops_per_s: Math.round(ops / seconds) }));
process.exit(0);
