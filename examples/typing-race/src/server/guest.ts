// Players are guests: an id and a name, kept in a signed cookie so that a reload or a
// reconnect is the same player. Clients without the cookie (tools, the benchmark's load
// generator) get a fresh guest per connection.
import { randomBytes } from 'node:crypto';
import type { Request, Response } from '@tachyon/server';
import type { Guest } from '../game/index.ts';
import { GuestName } from './schemas.ts';

export const GUEST_COOKIE = 'guest';
const MAX_AGE_S = 30 * 24 * 3600;

export function newGuest(name?: string): Guest {
  const id = randomBytes(9).toString('base64url');
  return { id, name: name ?? `Guest ${id.slice(0, 4)}` };
}

/** The guest in the request's signed cookie (undefined when absent, tampered with or malformed). */
export function guestFrom(req: Request<any>): Guest | undefined {
  const raw = req.signedCookies[GUEST_COOKIE];
  if (!raw) return undefined;
  const dot = raw.indexOf('.');
  if (dot <= 0) return undefined;
  const name = GuestName.safeParse(raw.slice(dot + 1));
  return name.success ? { id: raw.slice(0, dot), name: name.data } : undefined;
}

export function setGuestCookie(res: Response, guest: Guest): void {
  res.cookie(GUEST_COOKIE, `${guest.id}.${guest.name}`, { signed: true, httpOnly: true, sameSite: 'lax', path: '/', maxAge: MAX_AGE_S });
}
