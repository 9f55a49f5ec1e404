// Access logs (docs/logging.md): one line per request when it settles (answered, or the client
// left), through the request's logger, so the line carries the request id. Built on the public
// hook API: an app-level onResponse hook (the App adds it when the `accessLog` option is on).
import type { Request } from '../io/request.ts';
import { logAbout } from '../io/exchange.ts';
import type { HttpHooks, ResponseInfo } from '../hooks.ts';
import { checkKnownKeys } from '../../core/options-check.ts';
import type { AccessLogConfig } from '../../core/settings.ts';

export interface AccessLogOptions {
  /** Log level of the lines. Default 'info'. */
  level?: 'info' | 'debug';
  /** Requests not to log (health probes, metrics scrapes): `(req) => req.path === '/healthz'`. */
  skip?: (req: Request) => boolean;
}

const KNOWN = new Set(['level', 'skip']);

export function resolveAccessLog(option: boolean | AccessLogOptions | undefined): AccessLogConfig | null {
  if (option === undefined || option === false) return null;
  if (option === true) return { level: 'info', skip: undefined };
  if (typeof option !== 'object' || option === null) throw new TypeError('accessLog must be a boolean or { level, skip }');
  checkKnownKeys('accessLog', option, KNOWN);
  if (option.level !== undefined && option.level !== 'info' && option.level !== 'debug')
    throw new TypeError("accessLog.level must be 'info' or 'debug'");
  if (option.skip !== undefined && typeof option.skip !== 'function')
    throw new TypeError('accessLog.skip must be a function (req) => boolean');
  return { level: option.level ?? 'info', skip: option.skip };
}

/** The fields of one access-log line. */
interface AccessLine {
  reqId: string | undefined;
  method: string;
  path: string;
  route: string;
  status: number;
  bytes: number;
  duration: number;
  aborted: true | undefined;
}

/** The onResponse hook that writes the access log. */
export function accessLogHook(config: AccessLogConfig): HttpHooks['onResponse'] {
  return (req, _res, info) => logAccess(req, info, config);
}

/**
 * Called once when a logged response settles. logAbout() (io/exchange.ts) goes through
 * `req.log` when the request made one, otherwise through the app's logger with `reqId` as a
 * field: the same line without a child logger per request.
 */
function logAccess(req: Request, info: ResponseInfo, config: AccessLogConfig): void {
  try {
    if (config.skip !== undefined && config.skip(req)) return;
    const aborted = info.aborted;
    // One object, one shape: logAbout() fills reqId in place (pino skips an undefined field).
    const fields: AccessLine = {
      reqId: undefined,
      method: req.method,
      path: req.path,
      route: req.route,
      status: aborted ? 499 : info.status,
      bytes: info.bytes,
      duration: Math.round(info.duration * 1000) / 1000,
      aborted: aborted ? true : undefined,
    };
    const msg = aborted ? 'request aborted' : 'request completed';
    logAbout(req, config.level, fields, msg);
  } catch (err) {
    req.app.logger.error({ err }, 'access log failed');
  }
}
