import { randomBytes } from 'node:crypto';

/** A new epoch: 8 random bytes, base64url (11 characters, nothing to escape in JSON). */
export const newEpoch = (): string => randomBytes(8).toString('base64url');

/** Epochs on the wire: what newEpoch() makes, or what another store makes with the same alphabet. */
export const isEpoch = (value: unknown): value is string =>
  typeof value === 'string' && value.length >= 1 && value.length <= 64 && /^[A-Za-z0-9_-]+$/.test(value);
