// Security response headers (docs/secure-headers.md). The headers are built and checked once
// at setup (options.ts, prepareHeaders); per request the middleware hands the prepared set to
// res.setHeaders(), which takes it in one copy when no header was set yet.
import type { Middleware } from '../../http/types.ts';
import { resolveSecureHeaders, type SecureHeadersOptions } from './options.ts';

export type { ContentSecurityPolicyOptions, SecureHeadersOptions } from './options.ts';

/** `app.use(secureHeaders())`; override any header with a string, drop it with `false`. */
export function secureHeaders(options: SecureHeadersOptions = {}): Middleware {
  const { plain, tls } = resolveSecureHeaders(options);
  if (tls === null) {
    return (req, res, next) => {
      res.setHeaders(plain);
      return next();
    };
  }
  // HSTS only over TLS (or X-Forwarded-Proto: https from a trusted proxy): browsers ignore it
  // on plain HTTP, and sending it there would tell a MITM what to strip.
  return (req, res, next) => {
    res.setHeaders(req.protocol === 'https' ? tls : plain);
    return next();
  };
}
