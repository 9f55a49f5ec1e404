// A chat: the page (public/index.html) connects to the WebSocket route /chat with the
// browser client that app.client() serves, subscribes to a room's topic, and sends `say`
// events; the server checks them and publishes each message to the room's subscribers.
// Nothing is written twice: the typed client (test/chat.test.ts) reads the schemas below.
import { fileURLToPath } from 'node:url';
import { App, health } from '@tachyon/server';
import { z } from 'zod';

/** Room names: topics are `room:<name>`. */
const Room = z.string().regex(/^[a-z0-9-]{1,32}$/, 'lowercase letters, digits and dashes, 1 to 32');
const Say = z.object({ room: Room, name: z.string().trim().min(1).max(32), text: z.string().trim().min(1).max(500) });

/** What the server publishes to a room's topic. */
const ChatMessage = z.object({ name: z.string(), text: z.string(), at: z.number() });
export type ChatMessage = z.infer<typeof ChatMessage>;

// Chained declarations add themselves to the app's type: the typed client reads the topic's
// events and the route's requests from it (`connect<WsContract<Chat, '/chat'>>`, test/chat.test.ts).
export function createApp() {
  const app = new App()
    .use(health()) // GET /healthz and /readyz
    // What a room's topic carries: app.publish() below is type-checked against it.
    .topic('room:*', { events: { message: ChatMessage } });

  app.client(); // the browser client at /tachyon/client.js (from @tachyon/client)
  app.static('/', fileURLToPath(new URL('../public', import.meta.url)));

  return (
    app
      .ws('/chat', {
        // Clients may subscribe to room topics only (the default allows any topic not starting with __).
        subscribe: (_ws, topic) => topic.startsWith('room:') && Room.safeParse(topic.slice(5)).success,
        events: {
          say: {
            schema: Say,
            reply: z.object({ ok: z.boolean() }), // the reply to the sender's request(), typed on both sides
            handler(_ws, msg) {
              app.publish(`room:${msg.room}`, 'message', { name: msg.name, text: msg.text, at: Date.now() }); // to every subscriber, the sender included
              return { ok: true };
            },
          },
        },
      })
      // How many are in a room right now (in this process).
      .get('/rooms/:room', { params: z.object({ room: Room }) }, (req) => ({
        room: req.params.room,
        online: app.subscribers(`room:${req.params.room}`),
      }))
  );
}

/** The app's type: `connect<WsContract<Chat, '/chat'>>(url)` (from `@tachyon/client`) is typed from it. */
export type Chat = ReturnType<typeof createApp>;
