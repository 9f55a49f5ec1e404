// The `presence` control frame (docs/protocol.md): a client asks who is on a topic. Only a
// socket the route's `subscribe` hook would let subscribe to the topic may read its presence;
// the answer is a `reply` with the members, or an `error` with a code (never a crash).
import type { Logger } from '../../core/logger.ts';
import type { WsBehavior } from '../behavior.ts';
import { RESERVED_PREFIX, errorFrame, isValidTopic, replyFrame } from '../protocol.ts';
import type { Socket, SocketPresence } from '../socket.ts';

type Answer = (s: Socket<any>, text: string, async: boolean) => void;

/** Compiled once per route: answers one `{"type":"presence","topic":…,"ref":…}` frame. */
export function compilePresenceRead(
  b: WsBehavior<any, any>,
  log: Logger,
  answer: Answer,
  hub: { readonly presence: SocketPresence | null },
): (s: Socket<any>, topic: unknown, ref: number | undefined) => void {
  const reply = (s: Socket<any>, topic: string, ref: number, async: boolean) => {
    if (s.closed) return;
    const members = hub.presence!.members(topic);
    answer(s, replyFrame(ref, JSON.stringify(members)), async);
  };
  return (s, topic, ref) => {
    if (ref === undefined) return answer(s, errorFrame(undefined, 'BAD_FRAME', 'presence needs a ref (the reply carries it)'), false);
    if (!isValidTopic(topic)) return answer(s, errorFrame(ref, 'BAD_FRAME', 'presence needs a valid topic'), false);
    const tracker = hub.presence;
    if (tracker === null || tracker.options(topic) === null)
      return answer(s, errorFrame(ref, 'NO_PRESENCE', `Topic ${JSON.stringify(topic)} has no presence`), false);
    if (topic.startsWith(RESERVED_PREFIX)) return answer(s, errorFrame(ref, 'DENIED', 'reserved topic'), false);
    if (!b.subscribe) return reply(s, topic, ref, false);
    const denied = (async: boolean) => answer(s, errorFrame(ref, 'DENIED', `Presence of ${JSON.stringify(topic)} not allowed`), async);
    const failed = (err: unknown, async: boolean) => {
      log.error({ err, topic }, 'websocket subscribe hook failed (presence read)');
      answer(s, errorFrame(ref, 'DENIED', 'error'), async);
    };
    let allowed: boolean | Promise<boolean>;
    try {
      allowed = b.subscribe(s, topic);
    } catch (err) {
      return failed(err, false);
    }
    if (!(allowed instanceof Promise)) return allowed === true ? reply(s, topic, ref, false) : denied(false);
    allowed.then(
      (ok) => (ok === true ? reply(s, topic, ref, true) : denied(true)),
      (err) => failed(err, true),
    );
  };
}
