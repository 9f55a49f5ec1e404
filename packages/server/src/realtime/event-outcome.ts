// How one event frame ended, and the `aroundEvent` hooks that learn it (docs/hooks.md). A
// wrapper rather than a start/end pair of hooks: code that must be *active* while the event
// runs (a tracing span's context, an AsyncLocalStorage store) needs to call the rest; an end
// hook could time the event and see its outcome, but the handler would run outside that
// context, and the hook would need a map from event to its start. Routes without the hook
// pay one length check per event frame (control.ts); nothing is allocated for them.
import type { Logger } from '../core/logger.ts';
import type { Socket } from './socket.ts';

/**
 * What stopped an event, or OK. REFUSED: an onEvent hook returned false or threw (the client
 * got a HANDLER_ERROR frame); VALIDATION: the data failed the event's schema; HANDLER_ERROR:
 * the handler threw or rejected, or its reply could not be encoded; UNKNOWN_EVENT: the route
 * has no such event; RATE_LIMITED: the frame came over the route's messagesPerSecond.
 */
export type EventOutcomeCode = 'OK' | 'REFUSED' | 'VALIDATION' | 'HANDLER_ERROR' | 'UNKNOWN_EVENT' | 'RATE_LIMITED';

export interface EventOutcome {
  readonly code: EventOutcomeCode;
  /** What was thrown (REFUSED, VALIDATION, HANDLER_ERROR: an HttpError 403 when a hook returned false); undefined otherwise. */
  readonly error: unknown;
}

// The outcomes without an error are shared: the path without hooks allocates nothing for them.
export const EVENT_OK: EventOutcome = Object.freeze({ code: 'OK', error: undefined });
export const EVENT_UNKNOWN: EventOutcome = Object.freeze({ code: 'UNKNOWN_EVENT', error: undefined });
export const EVENT_RATE_LIMITED: EventOutcome = Object.freeze({ code: 'RATE_LIMITED', error: undefined });

export type EventRun = () => EventOutcome | Promise<EventOutcome>;
type AroundEvent = (ws: Socket<any>, event: string, run: EventRun) => unknown;

/**
 * Runs `run` inside `hooks` (the first outermost) and returns the event's outcome. The event
 * runs exactly once whatever a hook does: a second call of its `run` throws, and a hook that
 * throws, rejects or returns without having called it is logged and the rest runs anyway (a
 * client must get its reply).
 */
export function runAroundEvent(
  hooks: readonly AroundEvent[],
  s: Socket<any>,
  event: string,
  run: EventRun,
  log: Logger,
  i = 0,
): EventOutcome | Promise<EventOutcome> {
  if (i === hooks.length) return run();
  let called = false;
  let outcome: EventOutcome | Promise<EventOutcome> | undefined;
  let later: ((o: EventOutcome | Promise<EventOutcome>) => void) | undefined;
  const own: EventRun = () => {
    if (called) throw new Error(`aroundEvent: run() called twice for event "${event}"`);
    called = true;
    outcome = runAroundEvent(hooks, s, event, run, log, i + 1);
    later?.(outcome);
    return outcome;
  };
  const skipped = (): void => {
    if (called) return;
    log.error({ event }, 'aroundEvent hook returned without calling run(): the event ran anyway');
    own();
  };
  let out: unknown;
  try {
    out = hooks[i]!(s, event, own);
  } catch (err) {
    log.error({ err, event }, 'aroundEvent hook failed');
    skipped();
    return outcome!;
  }
  if (out instanceof Promise)
    out.then(skipped, (err) => {
      log.error({ err, event }, 'aroundEvent hook failed');
      skipped();
    });
  else skipped();
  // An async hook that calls run() later: the wrapper around it learns the outcome then.
  return outcome ?? new Promise((resolve) => (later = resolve));
}
