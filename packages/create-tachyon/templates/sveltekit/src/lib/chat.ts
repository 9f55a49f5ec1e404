// What the page, the form action and the WebSocket hooks share. No zod here: the page
// imports this module, and the schema (in +page.server.ts) stays out of the browser bundle.
export const ROOM = 'room:lobby';
export interface ChatMessage {
  name: string;
  text: string;
  at: number;
}
