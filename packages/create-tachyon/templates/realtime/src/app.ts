// A chat: the page (public/index.html) connects to the WebSocket route /chat with the
// browser client that app.client() serves, subscribes to a room's topic, and sends `say`
// events; the server checks them and publishes each message to the room's subscribers.
import { fileURLToPath } from 'node:url';
import { App, health } from '@tachyon/server';
import { z } from 'zod';

/** Room names: topics are `room:<name>`. */
const Room = z.string().regex(/^[a-z0-9-]{1,32}$/, 'lowercase letters, digits and dashes, 1 to 32');
const Say = z.object({ room: Room, name: z.string().trim().min(1).max(32), text: z.string().trim().min(1).max(500) });

export interface ChatMessage {
  name: string;
  text: string;
  at: number;
}

export function createApp(): App {
  const app = new App();
  app.use(health()); // GET /healthz and /readyz

  app.client(); // the browser client at /tachyon/client.js (from @tachyon/client)

  app.ws('/chat', {
    // Clients may subscribe to room topics only (the default allows any topic not starting with __).
    subscribe: (_ws, topic) => topic.startsWith('room:') && Room.safeParse(topic.slice(5)).success,
    events: {
      say: {
        schema: Say,
        handler(_ws, msg) {
          const message: ChatMessage = { name: msg.name, text: msg.text, at: Date.now() };
          app.publish(`room:${msg.room}`, 'message', message); // to every subscriber, the sender included
          return { ok: true }; // the reply to the sender's request()
        },
      },
    },
  });

  // How many are in a room right now (in this process).
  app.get('/rooms/:room', { params: z.object({ room: Room }) }, (req) => ({
    room: req.params.room,
    online: app.subscribers(`room:${req.params.room}`),
  }));

  app.static('/', fileURLToPath(new URL('../public', import.meta.url)));
  return app;
}
