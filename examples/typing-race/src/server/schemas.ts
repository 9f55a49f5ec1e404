// What clients may send, checked before the rules see it (zod). The rules check again what
// only they can know (the batch against the passage, the phase, the flood limit).
import { z } from 'zod';
import { ROOM_CODE } from '../game/index.ts';

export const RoomCode = z
  .string()
  .regex(ROOM_CODE, 'A room code is 6 letters or digits, after a worker id and a dash on cluster() (from matchmaking)');

export const JoinData = z.object({ roomCode: RoomCode });

/** `pvp:keystrokes` data: the typed characters themselves, batched by the client. */
export const Keystrokes = z.string().min(1).max(6);

export const GuestName = z
  .string()
  .trim()
  .min(1)
  .max(20)
  .regex(/^[\p{L}\p{N} _.-]+$/u, 'Letters, digits, spaces and _ . - only');

export const MatchmakeQuery = z.object({ name: GuestName.optional() });
