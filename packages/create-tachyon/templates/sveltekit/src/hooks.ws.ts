// The WebSocket route /ws (the adapter compiles this file, in `vite dev` and in the build).
// Pages subscribe to the room with topic() from @tachyon/sveltekit/client; messages are
// published by the form action (src/routes/+page.server.ts) through event.platform.
// Other hooks (upgrade for auth, open, events with replies, close): docs/sveltekit.md.
import type { Socket } from '@tachyon/server';
import { ROOM } from '#lib/chat.ts';

/** Clients may subscribe to the room and nothing else. */
export function subscribe(_ws: Socket, topic: string): boolean {
  return topic === ROOM;
}

/** The route's limits: the page sends no large frames. */
export const options = { maxPayloadLength: 16 * 1024 };
