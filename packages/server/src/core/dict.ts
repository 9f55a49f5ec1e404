// Prototype-free records that stay in V8's fast mode. `Object.create(null)` makes a
// dictionary-mode object, slow to fill and slow to read (Zod reads every key); an
// instance of a constructor whose prototype is null-based is a fast object whose chain
// has no Object.prototype, so `__proto__`, `constructor` etc. are ordinary own keys.
// (Node's querystring uses the same trick.)
function Dict(this: object) {}
Dict.prototype = Object.create(null);

export function dict<V>(): Record<string, V> {
  return new (Dict as unknown as new () => Record<string, V>)();
}
