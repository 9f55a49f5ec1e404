// Tachyon with `coalescePublishes: true`: the same server as tachyon.mjs, and on ws-fanout
// each topic's envelopes of one event-loop iteration leave as one JSON-array frame.
process.env.TACHYON_COALESCE = '1';
await import('./tachyon.mjs');
