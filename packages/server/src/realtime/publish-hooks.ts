// onPublish and onDeliver (docs/hooks.md): the app hooks that see messages leave and arrive.
// onPublish runs synchronously in the publisher's call (app.publish, app.publishRaw,
// socket.publish), so whatever context the publisher has (a request's span) is active; what
// it returns is metadata (string keys and values) carried with the message on the bus to the
// other processes (cluster() workers, Redis, NATS), where onDeliver hands it back before the
// message reaches local subscribers. Browsers never see it. Nothing here knows what the
// metadata means: @tachyon/otel puts a W3C traceparent in it, another plugin could put a
// tenant id. With no hook registered a publish pays one length check, and the bus carries
// exactly the bytes it carried before hooks existed.
import type { Logger } from '../core/logger.ts';
import type { BusMeta } from './bus/index.ts';
import type { Socket } from './socket.ts';
import { PUBLISH_HOOKS } from '../core/hook-names.ts';

export interface PublishInfo {
  /** The event name; null for app.publishRaw (bytes the app framed itself). */
  readonly event: string | null;
  /** The socket that published (socket.publish), or null for the app's publishes. */
  readonly socket: Socket<any> | null;
  /** A volatile publish (PublishOptions.volatile). */
  readonly volatile: boolean;
  /** True when the app has a bus to other processes: only then does the returned metadata travel. */
  readonly distributed: boolean;
}

export interface PublishHooks {
  /**
   * A publish, before its local fan-out. May return metadata for the bus (string values,
   * at most 4 KiB as JSON); undefined for none. A throw is logged: the publish goes on.
   */
  // biome-ignore lint/suspicious/noConfusingVoidType: a hook that only observes returns nothing (void), one that carries metadata returns it
  onPublish: (topic: string, info: PublishInfo) => BusMeta | undefined | void;
  /** A message from another process arrived with metadata, before its local fan-out. A throw is logged. */
  onDeliver: (topic: string, meta: Readonly<BusMeta>) => unknown;
}

export const PUBLISH_HOOK_NAMES: ReadonlySet<string> = new Set<keyof PublishHooks>(PUBLISH_HOOKS);

/** Runs the onPublish hooks: the metadata they returned (merged, later hooks winning), or undefined. */
export function runPublishHooks(
  hooks: readonly PublishHooks['onPublish'][],
  topic: string,
  info: PublishInfo,
  log: Logger,
): BusMeta | undefined {
  let meta: BusMeta | undefined;
  for (const hook of hooks) {
    let out: unknown;
    try {
      out = hook(topic, info);
    } catch (err) {
      log.error({ err, topic }, 'onPublish hook failed');
      continue;
    }
    if (out === undefined || out === null) continue;
    const problem = checkMeta(out);
    if (problem !== null) {
      log.error({ topic, problem }, 'onPublish hook returned bad metadata: ignored');
      continue;
    }
    meta = meta === undefined ? (out as BusMeta) : { ...meta, ...(out as BusMeta) };
  }
  return meta;
}

/** Why `meta` cannot travel on a bus, or null. Also used on arrival (broker frames). */
export function checkMeta(meta: unknown): string | null {
  if (typeof meta !== 'object' || meta === null || Array.isArray(meta) || meta instanceof Promise)
    return 'metadata must be a plain object of strings (an async hook cannot return it)';
  for (const key in meta) if (typeof (meta as Record<string, unknown>)[key] !== 'string') return `metadata "${key}" is not a string`;
  return null;
}

/** Runs the onDeliver hooks for a message that arrived with metadata. */
export function runDeliverHooks(hooks: readonly PublishHooks['onDeliver'][], topic: string, meta: BusMeta, log: Logger): void {
  for (const hook of hooks) {
    try {
      const out = hook(topic, meta);
      if (out instanceof Promise) out.catch((err) => log.error({ err, topic }, 'onDeliver hook failed'));
    } catch (err) {
      log.error({ err, topic }, 'onDeliver hook failed');
    }
  }
}
