// What the page, the form action and the WebSocket hooks share: the room and a message's shape.
import { z } from 'zod';

export const ROOM = 'room:lobby';
export const Say = z.object({ name: z.string().trim().min(1).max(32), text: z.string().trim().min(1).max(500) });
export type ChatMessage = z.infer<typeof Say> & { at: number };
