// API-key authentication for Tachyon, as a third-party plugin: public imports only.
//
//   await app.register(apiKeyAuth({ keys: { 'k-123': { name: 'ci', scopes: ['read'] } } }));
//   app.get('/me', (req) => req.apiKey);   // { name: 'ci', scopes: ['read'] } (typed), or null
//
// The key is read from a header (default `x-api-key`) by a preHandler hook; a request with a
// missing or unknown key gets 401 unless its path is in `public`. The plugin is global (it
// decorates every request of the app) and named, so it is registered once.
import { definePlugin, HttpError, type Request, type Scope } from '@tachyon/server';

/** What a key stands for: who uses it and what it may do. */
export interface ApiKey {
  readonly name: string;
  readonly scopes: readonly string[];
}

export interface ApiKeyAuthOptions {
  /** Valid keys and what they stand for, or a lookup (may be async: a database). */
  keys: Readonly<Record<string, ApiKey>> | ((key: string) => ApiKey | null | undefined | Promise<ApiKey | null | undefined>);
  /** Header the key is read from. Default `x-api-key`. */
  header?: string;
  /** Paths answered without a key (exact match on `req.path`), e.g. ['/healthz']. */
  public?: readonly string[];
}

// Typed on every request once this module is imported: `req.apiKey`.
declare module '@tachyon/server' {
  interface RequestDecorations {
    /** The key the request was authenticated with; null on public paths without one. */
    apiKey: ApiKey | null;
  }
}

/** The plugin, with its options checked now (a bad option fails at registration, not per request). */
export function apiKeyAuth(options: ApiKeyAuthOptions) {
  if (typeof options !== 'object' || options === null) throw new TypeError('apiKeyAuth(options): options must be an object');
  const { keys } = options;
  if (typeof keys !== 'function' && (typeof keys !== 'object' || keys === null))
    throw new TypeError('apiKeyAuth: keys must be an object of keys or a lookup function');
  const header = (options.header ?? 'x-api-key').toLowerCase();
  if (!/^[!#$%&'*+.^_`|~0-9a-z-]+$/.test(header))
    throw new TypeError(`apiKeyAuth: header must be a valid header name, got ${JSON.stringify(options.header)}`);
  const open = new Set(options.public ?? []);
  const lookup = typeof keys === 'function' ? keys : (key: string) => (Object.hasOwn(keys, key) ? keys[key] : undefined);

  const authenticate = async (req: Request): Promise<void> => {
    const key = req.header(header);
    const found = key === undefined || key === '' ? undefined : await lookup(key);
    if (found) req.apiKey = found;
    else if (!open.has(req.path))
      throw new HttpError(401, key ? 'Unknown API key' : `Missing API key (header ${header})`, {
        headers: { 'www-authenticate': `ApiKey header="${header}"` },
      });
  };

  return definePlugin({ name: 'api-key-auth', global: true }, (scope: Scope) => {
    scope.decorateRequest('apiKey', null);
    scope.addHook('preHandler', authenticate);
  });
}

/** A route hook for routes that need a scope: `{ hooks: { preHandler: requireScope('write') } }`. */
export function requireScope(needed: string) {
  return (req: Request): void => {
    if (!req.apiKey?.scopes.includes(needed)) throw new HttpError(403, `This API key lacks the "${needed}" scope`);
  };
}
