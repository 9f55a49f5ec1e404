// The sockets of the app's hooks.ws route, for event.platform's send / sendTo / pressure: a
// set of open sockets and an index by user id (`ws.data.id`, the default presence id).
// Kept here, by wrapping the route's open and close hooks once at install: a SvelteKit page
// can only reach the sockets it can find.
import type { App, Socket, WsBehavior } from '@tachyon/server';

export class SocketRegistry {
  readonly all = new Set<Socket<any>>();
  /** The other workers of a cluster can reach these sockets (across-workers.ts answers them). */
  shared = false;
  private readonly byUser = new Map<string, Set<Socket<any>>>();

  add(ws: Socket<any>): void {
    this.all.add(ws);
    const id = userIdOf(ws);
    if (id === undefined) return;
    let mine = this.byUser.get(id);
    if (mine === undefined) this.byUser.set(id, (mine = new Set()));
    mine.add(ws);
  }

  remove(ws: Socket<any>): void {
    if (!this.all.delete(ws)) return;
    const id = userIdOf(ws);
    if (id === undefined) return;
    const mine = this.byUser.get(id);
    if (mine === undefined) return;
    mine.delete(ws);
    if (mine.size === 0) this.byUser.delete(id);
  }

  /** The open sockets of user `id` (empty when none). */
  ofUser(id: string): ReadonlySet<Socket<any>> {
    return this.byUser.get(id) ?? EMPTY;
  }
}

/** Sends `message` to `ws`: 1 if it took it (sent, or queued under backpressure), else 0. */
export function deliver(ws: Socket<any>, message: string): number {
  const r = ws.sendRaw(message);
  return r === 'sent' || r === 'backpressure' ? 1 : 0;
}

const EMPTY: ReadonlySet<Socket<any>> = new Set();

/** `ws.data.id` as a string (numbers too), else undefined: the same default as presence's member id. */
function userIdOf(ws: Socket<any>): string | undefined {
  const data = ws.data as { id?: unknown } | null | undefined;
  const id = typeof data === 'object' && data !== null ? data.id : undefined;
  return typeof id === 'string' ? id : typeof id === 'number' ? String(id) : undefined;
}

const registries = new WeakMap<object, SocketRegistry>();

export function registryOf(app: App): SocketRegistry {
  let r = registries.get(app);
  if (r === undefined) registries.set(app, (r = new SocketRegistry()));
  return r;
}

/** `behavior` with open/close also keeping `registry` (the app's own hooks run as before). */
export function tracked(behavior: WsBehavior<any, any>, registry: SocketRegistry): WsBehavior<any, any> {
  const open = behavior.open;
  const close = behavior.close;
  return {
    ...behavior,
    open(ws) {
      registry.add(ws);
      return open?.(ws);
    },
    close(ws, code, reason) {
      registry.remove(ws);
      return close?.(ws, code, reason);
    },
  };
}
