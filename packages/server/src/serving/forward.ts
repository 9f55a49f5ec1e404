// The light web objects (web-request.ts, web-headers.ts) answer the common members
// themselves and hand every other member of the web class to a real instance. Inherited
// as they are, those members would throw on a light object: undici checks for its private
// state on each call.

/**
 * Defines on `light` (a class prototype) each getter and method of `web` (Request.prototype,
 * Headers.prototype) that `light` does not define itself, calling it on `realOf(this)`; then
 * puts `web` in `light`'s prototype chain, so `instanceof` holds. Members a later Node adds are
 * forwarded too.
 */
export function forwardTheRest<T>(light: object, web: object, realOf: (self: T) => object): void {
  const own = new Set(Reflect.ownKeys(light));
  for (const key of Reflect.ownKeys(web)) {
    const d = Object.getOwnPropertyDescriptor(web, key)!;
    if (own.has(key)) continue;
    if (d.get !== undefined) {
      Object.defineProperty(light, key, {
        configurable: true,
        get(this: T) {
          return Reflect.get(realOf(this), key);
        },
      });
    } else if (typeof d.value === 'function') {
      Object.defineProperty(light, key, {
        configurable: true,
        writable: true,
        value(this: T, ...args: unknown[]) {
          const real = realOf(this);
          return (Reflect.get(real, key) as (...a: unknown[]) => unknown).apply(real, args);
        },
      });
    }
  }
  Object.setPrototypeOf(light, web);
}
