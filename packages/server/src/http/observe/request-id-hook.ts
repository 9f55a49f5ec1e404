// The request-id hook, apart from request-id.ts (which the request itself imports) so that the
// hook types (which name the request) form no import cycle.
import type { HttpHooks } from '../hooks.ts';
import type { RequestIdConfig } from '../../core/settings.ts';

/**
 * The onRequest hook that sets the response header (the App adds it first when the
 * `requestId` option is on). Reading `req.id` makes the id; a custom generator that fails
 * fails the request (500, logged).
 */
export function requestIdHook(config: RequestIdConfig): HttpHooks['onRequest'] {
  const header = config.header;
  return (req, res) => {
    res.header(header, req.id);
  };
}
