// event.platform: what load functions, actions, endpoints and hooks see of Tachyon. One
// object per app, made once (not per request): it holds no request state. The members follow
// svelte-adapter-uws's `platform` where they overlap (send, sendTo, connections, subscribers,
// publish), on Tachyon's envelope (docs/protocol.md) and its server → client requests.
// Under WORKERS, send(userId) and sendTo(filter) also reach the other workers' sockets
// (across-workers.ts); counts and pressure stay this worker's.
import { Socket, type App, type PresenceMember, type SocketRequestOptions } from '@tachyon/server';
import { sendToFilteredElsewhere, sendToUserElsewhere } from './across-workers.ts';
import { deliver, registryOf, type SocketRegistry } from './sockets.ts';

/** How loaded the server is right now (computed when read: one pass over the open sockets). */
export interface Pressure {
  /** Open WebSocket connections in this process (this worker under WORKERS). */
  connections: number;
  /** Sockets with bytes waiting to be sent (uWS backpressure). */
  backpressured: number;
  /** Bytes waiting to be sent, over every socket. */
  buffered: number;
  /** HTTP requests in flight. */
  inflight: number;
  /** The server is shutting down. */
  draining: boolean;
}

export interface Platform {
  /** The Tachyon app serving the SvelteKit app (its routes, `app.ws`, `app.publish`, …). */
  readonly app: App;
  /** Publishes `{"topic","event","data"}` to every WebSocket subscribed to `topic` (see docs/realtime.md). */
  publish(topic: string, event: string, data?: unknown): boolean;
  /** Number of WebSockets subscribed to `topic` in this process (this worker; `app.cluster.subscribers` for all). */
  subscribers(topic: string): number;
  /** Open WebSocket connections in this process (this worker; `app.cluster.connections` for all). */
  readonly connections: number;
  /**
   * Sends `{"event","data"}` to one socket, or to every open socket of a user (its tabs: the
   * sockets whose `ws.data.id` is that id), on every worker under WORKERS. Returns how many
   * sockets of this worker took the message (sent or queued under backpressure); the other
   * workers deliver it asynchronously, uncounted.
   */
  send(to: Socket<any> | string | number, event: string, data?: unknown): number;
  /**
   * Sends `{"event","data"}` to every hooks.ws socket whose data passes `filter`; returns how
   * many of this worker took it. Under WORKERS the filter also runs, after this call returns,
   * over the other workers' sockets: with their `ws.data` (a copy) and `ws` undefined.
   */
  sendTo<Data = any>(filter: (data: Data, ws: Socket<Data> | undefined) => boolean, event: string, data?: unknown): number;
  /** Asks one client (its `live.handle(event, fn)`: a Socket is of this worker, so this never crosses workers) and resolves with its answer (rejects with a SocketRequestError). */
  request<Reply = unknown>(ws: Socket<any>, event: string, data?: unknown, options?: SocketRequestOptions): Promise<Reply>;
  /** Connections, backpressure and in-flight requests of this worker, to shed work under load. */
  readonly pressure: Pressure;
  /** Who is on a presence topic (`app.topic(pattern, { presence: true })`); rejects for other topics. */
  presence<Data = unknown>(topic: string): Promise<PresenceMember<Data>[]>;
}

/** Event names as the protocol allows them (checked before anything is sent, even to no one). */
const EVENT_NAME = /^[\x20-\x21\x23-\x5b\x5d-\x7e]{1,128}$/;

function envelope(event: string, data: unknown): string {
  if (typeof event !== 'string' || !EVENT_NAME.test(event))
    throw new TypeError(`Invalid event name ${JSON.stringify(event)}: 1-128 printable ASCII characters, no quotes or backslashes`);
  if (data === undefined) return `{"event":"${event}"}`;
  const json = JSON.stringify(data);
  if (json === undefined) throw new TypeError('Event data is not JSON-serializable');
  return `{"event":"${event}","data":${json}}`;
}

class TachyonPlatform implements Platform {
  readonly app: App;
  readonly #sockets: SocketRegistry;

  constructor(app: App) {
    this.app = app;
    this.#sockets = registryOf(app);
  }

  publish(topic: string, event: string, data?: unknown): boolean {
    return this.app.publish(topic, event, data);
  }

  subscribers(topic: string): number {
    return this.app.subscribers(topic);
  }

  get connections(): number {
    return this.app.connections;
  }

  send(to: Socket<any> | string | number, event: string, data?: unknown): number {
    const message = envelope(event, data);
    if (to instanceof Socket) return deliver(to, message);
    if (typeof to !== 'string' && typeof to !== 'number')
      throw new TypeError('platform.send(to, …): `to` must be a Socket or a user id (string or number)');
    const user = String(to);
    let n = 0;
    for (const ws of this.#sockets.ofUser(user)) n += deliver(ws, message);
    sendToUserElsewhere(this.app, this.#sockets, user, message);
    return n;
  }

  sendTo<Data = any>(filter: (data: Data, ws: Socket<Data> | undefined) => boolean, event: string, data?: unknown): number {
    if (typeof filter !== 'function') throw new TypeError('platform.sendTo(filter, …): `filter` must be a function');
    const message = envelope(event, data);
    let n = 0;
    for (const ws of this.#sockets.all) if (filter(ws.data as Data, ws)) n += deliver(ws, message);
    sendToFilteredElsewhere(this.app, this.#sockets, filter, message);
    return n;
  }

  request<Reply = unknown>(ws: Socket<any>, event: string, data?: unknown, options?: SocketRequestOptions): Promise<Reply> {
    if (!(ws instanceof Socket)) return Promise.reject(new TypeError('platform.request(ws, …): `ws` must be a Socket'));
    return ws.request<Reply>(event, data, options);
  }

  get pressure(): Pressure {
    let backpressured = 0;
    let buffered = 0;
    for (const ws of this.#sockets.all) {
      const b = ws.bufferedAmount;
      if (b > 0) {
        backpressured++;
        buffered += b;
      }
    }
    const app = this.app;
    return { connections: app.connections, backpressured, buffered, inflight: app.inflight, draining: app.draining };
  }

  presence<Data = unknown>(topic: string): Promise<PresenceMember<Data>[]> {
    return this.app.presence<Data>(topic);
  }
}

const platforms = new WeakMap<object, Platform>();

export function platformFor(app: App): Platform {
  let p = platforms.get(app);
  if (p === undefined) {
    p = Object.freeze(new TachyonPlatform(app));
    platforms.set(app, p);
  }
  return p;
}
