import { fail } from '@sveltejs/kit';
import { z } from 'zod';
import { ROOM, type ChatMessage } from '#lib/chat.ts';
import type { Actions, PageServerLoad } from './$types';

const Say = z.object({ name: z.string().trim().min(1).max(32), text: z.string().trim().min(1).max(500) });

export const load: PageServerLoad = ({ platform }) => ({
  // Rendered on the server: how many pages have the room open in this process.
  online: platform?.subscribers(ROOM) ?? 0,
});

export const actions: Actions = {
  say: async ({ request, platform }) => {
    const form = await request.formData();
    const parsed = Say.safeParse({ name: form.get('name'), text: form.get('text') });
    if (!parsed.success) return fail(400, { error: parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ') });
    const message: ChatMessage = { ...parsed.data, at: Date.now() };
    platform?.publish(ROOM, 'message', message); // every page subscribed to the room, this one included
    return { sent: true };
  },
};
