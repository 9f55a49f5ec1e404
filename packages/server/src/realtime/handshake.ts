// Checks on a WebSocket handshake that uWS does not make, run before the origin check and the
// app's upgrade hook.
import type { Logger } from '../core/logger.ts';
import type { UwsRequest, UwsResponse } from '../uws/index.ts';

/**
 * RFC 6455 §4.2.2: a server that does not speak the requested version answers 426 with the
 * version it does speak. uWS 20.57 upgrades any version, so a client speaking an old draft
 * (8: hybi-08) would get 101 and then frames it cannot read. Returns true when it answered.
 */
export function refuseWsVersion(ures: UwsResponse, ureq: UwsRequest, logger: Logger): boolean {
  const version = ureq.getHeader('sec-websocket-version');
  if (version === '13') return false;
  logger.info({ url: ureq.getUrl(), version }, 'websocket upgrade refused: unsupported Sec-WebSocket-Version');
  ures
    .writeStatus('426 Upgrade Required')
    .writeHeader('sec-websocket-version', '13')
    .writeHeader('content-type', 'text/plain; charset=utf-8');
  ures.end(`Unsupported Sec-WebSocket-Version ${JSON.stringify(version)}; this server speaks 13`);
  return true;
}
