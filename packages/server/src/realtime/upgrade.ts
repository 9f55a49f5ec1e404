// The HTTP side of a WebSocket route: the upgrade request is checked (framing, protocol
// version, origin), the app's `upgrade(req)` decides (sync or async), then uWS upgrades.
import { framingProblem, refuseFraming } from '../http/framing.ts';
import { defaultErrorHandler, readParams } from '../http/compile-route.ts';
import { HttpError } from '../http/errors.ts';
import { Request, resolveClientIp } from '../http/io/request.ts';
import { Response, type ResponseHooks } from '../http/io/response.ts';
import { continueAsync, handOver, leaveCallback, pair } from '../http/io/exchange.ts';
import type { Settings } from '../core/settings.ts';
import { asciiText, type UwsResponse, type UwsWebSocketBehavior } from '../uws/index.ts';
import type { WsBehavior, WsRouteSpec } from './behavior.ts';
import { refuseWsVersion } from './handshake.ts';
import { Socket, type SocketPolicy } from './socket.ts';
import type { MessageBudget, UpgradeLimiter } from './rate-limit.ts';
import { runGate, upgradeRefused, type WsHookLists } from './ws-hooks.ts';
import { warnBadInput } from '../core/throttled-log.ts';

/** What uWS hands to `open` as the socket's user data. */
export interface UpgradeData {
  socket: Socket<any>;
  /** The upgrade finished outside its callback (async `upgrade` hook): see `open` in route.ts. */
  deferOpen: boolean;
  /** Message counting, on routes with rateLimit.messagesPerSecond only (route.ts). */
  budget: MessageBudget | null;
}

/** Builds the uWS `upgrade` handler for one route (once, at startup). */
export function compileUpgrade(
  spec: WsRouteSpec,
  settings: Settings,
  policy: SocketPolicy,
  tls: boolean,
  limiter: UpgradeLimiter | null,
  wsHooks: Pick<WsHookLists, 'onUpgrade' | 'onUpgradeEnd'>,
  RequestClass: typeof Request = Request,
  /**
   * The fallback transport (fallback/route.ts): an accepted request opens an SSE session on
   * `ures` instead of upgrading. `async`: decided outside the uWS callback (writes need a cork).
   */
  stream?: (ures: UwsResponse, data: UpgradeData, async: boolean) => void,
): NonNullable<UwsWebSocketBehavior['upgrade']> {
  const b = spec.behavior;
  const log = settings.logger;
  const hooks: ResponseHooks = {
    settled() {},
    fail(err, req: Request, res: Response) {
      defaultErrorHandler(err, req, res, settings);
    },
    compression: null,
    dedup: null,
  };
  const onUpgrade = wsHooks.onUpgrade;
  const ends = wsHooks.onUpgradeEnd;
  /** The onUpgradeEnd hooks: observers, so a throw or a rejection is logged and nothing else. */
  const ended = (req: Request, status: number, socket: Socket<any> | null, error: unknown): void => {
    const outcome = { status, socket, error };
    for (const hook of ends) {
      try {
        const out = hook(req, outcome);
        if (out instanceof Promise) out.catch((err) => log.error({ err }, 'websocket onUpgradeEnd hook failed'));
      } catch (err) {
        log.error({ err }, 'websocket onUpgradeEnd hook failed');
      }
    }
  };
  /** A refused handshake: the error's answer, then its status to the onUpgradeEnd hooks (0 when the client had left). */
  const refuse = (err: unknown, req: Request, res: Response): void => {
    const left = res.finished;
    hooks.fail(err, req, res);
    if (ends.length !== 0) ended(req, left ? 0 : res.statusCode, null, left ? undefined : err);
  };
  const paramNames = spec.pattern.paramNames;
  const wildcardAt = spec.pattern.wildcardAt;
  const hasParams = paramNames.length > 0 || wildcardAt !== -1;
  const origins = b.allowedOrigins;
  const staticOrigins = typeof origins === 'function' ? undefined : origins;
  // With an upgrade limit every handshake is counted, through the full path below.
  const direct =
    stream === undefined &&
    b.upgrade === undefined &&
    typeof origins !== 'function' &&
    limiter === null &&
    onUpgrade.length === 0 &&
    ends.length === 0;
  const route = b.upgrade;
  /** Origin check, the onUpgrade hooks, then the route's hook: the socket's data, false, or a promise of either. */
  const decide = (req: Request): unknown => {
    if (!originAllowed(b.allowedOrigins, req)) {
      warnBadInput(
        log,
        { origin: req.header('origin'), host: req.header('host'), ip: req.ip },
        'websocket upgrade refused: origin not allowed',
      );
      throw new HttpError(403, 'Origin not allowed');
    }
    const gate = onUpgrade.length === 0 ? undefined : runGate(onUpgrade, upgradeRefused, req);
    if (gate !== undefined) return gate.then(() => (route ? route(req) : undefined));
    return route ? route(req) : undefined;
  };

  return (ures, ureq, context) => {
    const framing = framingProblem(ureq);
    if (framing !== null) return refuseFraming(ures, ureq, framing, log);
    if (stream === undefined && refuseWsVersion(ures, ureq, log)) return;
    if (direct) {
      // No upgrade hook and no origin callback: nothing needs a Request, so none is built
      // (less garbage per connection). A refused origin takes the full path below.
      const origin = ureq.getHeader('origin');
      if (origin === '' || originMatches(staticOrigins, origin, ureq.getHeader('host') || undefined)) {
        const ip = resolveClientIp(
          asciiText(ures.getRemoteAddressAsText()),
          ureq.getHeader('x-forwarded-for') || undefined,
          settings.trustProxy,
        );
        const data: UpgradeData = { socket: new Socket(undefined, ip, policy), deferOpen: false, budget: null };
        ures.upgrade(
          data,
          ureq.getHeader('sec-websocket-key'),
          ureq.getHeader('sec-websocket-protocol'),
          ureq.getHeader('sec-websocket-extensions'),
          context,
        );
        return;
      }
    }
    const res = new Response(ures, settings, hooks, false, tls);
    const req = new RequestClass(ureq, res, 'GET', settings, 0, spec.pattern.path);
    pair(req, res);
    // The uWS request dies with this callback: copy the handshake headers now.
    const key = ureq.getHeader('sec-websocket-key');
    const protocol = ureq.getHeader('sec-websocket-protocol');
    const extensions = ureq.getHeader('sec-websocket-extensions');
    const finish = (decided: unknown, async: boolean) => {
      if (res.finished) return ends.length === 0 ? undefined : ended(req, 0, null, undefined); // the client left during an async upgrade
      if (decided === false) return refuse(new HttpError(401, 'Unauthorized'), req, res);
      const data: UpgradeData = { socket: new Socket(decided, req.ip, policy), deferOpen: async, budget: null };
      // Told before uWS opens the socket, so that onUpgradeEnd always runs before onOpen.
      if (ends.length !== 0) ended(req, stream === undefined ? 101 : 200, data.socket, undefined);
      handOver(res); // handed over to uWS: the HTTP response must not be touched again
      if (stream !== undefined) return stream(ures, data, async);
      ures.cork(() => ures.upgrade(data, key, protocol, extensions, context));
    };
    try {
      req.params = (hasParams ? readParams(ureq, paramNames, wildcardAt) : {}) as never;
      // Counted first: a flood is refused before any origin or app work.
      const counted = limiter === null ? undefined : limiter.check(req, log);
      const decided = counted === undefined ? decide(req) : counted.then(() => decide(req));
      if (!(decided instanceof Promise)) {
        leaveCallback(res); // upgrade() corks by itself
        return finish(decided, false);
      }
      continueAsync(req, res, ures);
      decided.then(
        (data) => finish(data, true),
        (err) => refuse(err, req, res),
      );
    } catch (err) {
      leaveCallback(res);
      refuse(err, req, res);
    }
  };
}

/** Browsers send Origin on every WebSocket handshake; other clients usually don't. */
function originAllowed(policy: WsBehavior<any, any>['allowedOrigins'], req: Request): boolean {
  const origin = req.header('origin');
  if (origin === undefined) return true;
  if (typeof policy === 'function') return policy(origin, req) === true;
  return originMatches(policy, origin, req.header('host'));
}

/** '*', a list, or (default) same origin as the Host header. */
function originMatches(policy: '*' | string[] | undefined, origin: string, host: string | undefined): boolean {
  if (policy === '*') return true;
  if (Array.isArray(policy)) return policy.includes(origin);
  try {
    return new URL(origin).host === host;
  } catch {
    return false;
  }
}
