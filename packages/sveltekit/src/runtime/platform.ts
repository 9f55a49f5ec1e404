// event.platform: what load functions, actions, endpoints and hooks see of Tachyon. One
// object per app, made once (not per request): it holds no request state.
import type { App } from '@tachyon/server';

export interface Platform {
  /** The Tachyon app serving the SvelteKit app (its routes, `app.ws`, `app.publish`, …). */
  readonly app: App;
  /** Publishes `{"topic","event","data"}` to every WebSocket subscribed to `topic` (see docs/realtime.md). */
  publish(topic: string, event: string, data?: unknown): boolean;
  /** Number of WebSockets subscribed to `topic` in this process. */
  subscribers(topic: string): number;
}

const platforms = new WeakMap<object, Platform>();

export function platformFor(app: App): Platform {
  let p = platforms.get(app);
  if (p === undefined) {
    p = Object.freeze({
      app,
      publish: (topic: string, event: string, data?: unknown) => app.publish(topic, event, data),
      subscribers: (topic: string) => app.subscribers(topic),
    });
    platforms.set(app, p);
  }
  return p;
}
