// The light web Request (web-request.ts) passes `instanceof Request`, so undici's own
// `new Request(input)` and `fetch(input)` take it for one of theirs and read its private
// state: "Cannot read private member #state". The global `Request` and `fetch` are replaced,
// once, by ones that hand undici the real Request behind a light one and change nothing for
// any other input (SvelteKit's event.fetch and a handler's `fetch(event.request)` or
// `new Request(event.request)` go through the globals). Modules that kept the originals
// before this ran (`const f = fetch` at import) still have them: installed when the first
// mount() route is made or the first light Request built, before any request is handled.
import { LightRequest, realRequestOf } from './web-request.ts';

let installed = false;

export function acceptLightRequests(): void {
  if (installed) return;
  installed = true;
  const WebRequest = globalThis.Request;
  const webFetch = globalThis.fetch;
  // A Proxy, not a subclass: `Request.prototype`, `instanceof Request` (real Requests made by
  // undici itself included), `Request.name` and subclasses of the global stay as they were.
  const request: typeof WebRequest = new Proxy(WebRequest, {
    construct(target, args, newTarget): object {
      if (args[0] instanceof LightRequest) args[0] = realRequestOf(args[0]);
      return Reflect.construct(target, args, newTarget === request ? target : newTarget);
    },
  });
  const fetch: typeof webFetch = function fetch(input, init) {
    return webFetch(input instanceof LightRequest ? realRequestOf(input) : input, init);
  };
  Object.defineProperty(globalThis, 'Request', { value: request, writable: true, enumerable: false, configurable: true });
  Object.defineProperty(globalThis, 'fetch', { value: fetch, writable: true, enumerable: true, configurable: true });
}
