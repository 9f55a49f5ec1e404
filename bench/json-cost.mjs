#!/usr/bin/env node
// Event-loop time a JSON request body costs, per MiB, by shape: what a route's `bodyLimit`
// buys an attacker (docs/request.md, "Body limits and their cost"). Parsing is synchronous:
// while it runs, no other request on this process is served.
//
//   node bench/json-cost.mjs
const MIB = 1024 * 1024;
const shapes = {
  'many small keys {"k0":0,…}': (n) => '{' + Array.from({ length: n }, (_, i) => `"k${i}":${i}`).join(',') + '}',
  'array of numbers [0,1,…]': (n) => '[' + Array.from({ length: n }, (_, i) => i).join(',') + ']',
  'array of small objects': (n) => JSON.stringify(Array.from({ length: n }, (_, i) => ({ id: i, name: `user${i}`, ok: true }))),
  'long strings': (n) => JSON.stringify(Array.from({ length: n }, () => 'x'.repeat(1000))),
  '\\u escapes (key walk runs)': (n) => '{' + Array.from({ length: n }, (_, i) => `"k\\u00${(i % 90) + 10}${i}":${i}`).join(',') + '}',
};
const { parseJson } = await import('../packages/server/src/http/io/body.ts');
console.log('shape                           MiB   parse+check ms   ms per MiB');
for (const [name, make] of Object.entries(shapes)) {
  // Grow n until the text is at least 8 MiB, so the figure is per-MiB, not per-call overhead.
  let n = 1000;
  let text = make(n);
  while (text.length < 8 * MIB) {
    n *= 2;
    text = make(n);
  }
  const buf = Buffer.from(text);
  parseJson(buf); // warm-up
  const times = [];
  for (let i = 0; i < 5; i++) {
    const t0 = performance.now();
    parseJson(buf);
    times.push(performance.now() - t0);
  }
  times.sort((a, b) => a - b);
  const ms = times[2];
  const mib = buf.length / MIB;
  console.log(`${name.padEnd(30)} ${mib.toFixed(1).padStart(5)} ${ms.toFixed(0).padStart(14)} ${(ms / mib).toFixed(1).padStart(12)}`);
}
