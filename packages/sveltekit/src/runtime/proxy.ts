// What the request looked like before a reverse proxy: its origin (ORIGIN, or the
// PROTOCOL_HEADER / HOST_HEADER / PORT_HEADER a proxy sets) and the client address
// (ADDRESS_HEADER, with XFF_DEPTH for X-Forwarded-For). Same rules as adapter-node.
import { HttpError, type Request } from '@tachyon/server';
import type { ServerEnv } from './env.ts';

const HOST = /^[A-Za-z0-9.\-_~]+(?::\d{1,5})?$|^\[[0-9A-Fa-f:.]+\](?::\d{1,5})?$/;
const SCHEME = /^[A-Za-z][A-Za-z0-9+.-]*$/;
const PORT = /^\d{1,5}$/;

/** undefined: the URL comes from the connection's protocol and the Host header. */
export type OriginOf = ((req: Request) => string) | undefined;

export function originResolver(env: ServerEnv): OriginOf {
  if (env.origin !== undefined) {
    const origin = env.origin;
    return () => origin;
  }
  const { protocolHeader, hostHeader, portHeader } = env;
  if (!protocolHeader && !hostHeader && !portHeader) return undefined;
  return (req) => {
    let protocol: string = req.protocol;
    if (protocolHeader) {
      const raw = req.header(protocolHeader);
      if (raw) {
        const p = decodeURIComponentSafe(raw);
        // The header is client input when no proxy sets it: it must not reshape the URL.
        if (!SCHEME.test(p)) throw new HttpError(400, `The ${protocolHeader} header must hold a URL scheme like https`);
        protocol = p;
      }
    }
    const host = (hostHeader && req.header(hostHeader)) || req.header('host');
    if (!host)
      throw new HttpError(400, `Could not determine the host: the request has no ${hostHeader ? `${hostHeader} or host` : 'host'} header`);
    if (!HOST.test(host)) throw new HttpError(400, 'Malformed host header');
    const port = portHeader ? req.header(portHeader) : undefined;
    if (port) {
      if (!PORT.test(port)) throw new HttpError(400, `The ${portHeader} header must be a port number`);
      return `${protocol}://${host.replace(/:\d+$/, '')}:${port}`;
    }
    return `${protocol}://${host}`;
  };
}

function decodeURIComponentSafe(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

/** getClientAddress(): the socket's address, or the proxy's ADDRESS_HEADER. Throws (→ 500 in SvelteKit) when the header is missing. */
export function clientAddressOf(env: ServerEnv, prefix: string): (req: Request) => string {
  const { addressHeader, xffDepth } = env;
  if (!addressHeader) return (req) => req.ip;
  return (req) => {
    const value = req.header(addressHeader);
    if (value === undefined)
      throw new Error(`Address header was specified with ${prefix}ADDRESS_HEADER=${addressHeader} but is absent from request`);
    if (addressHeader !== 'x-forwarded-for') return value;
    const addresses = value.split(',');
    if (xffDepth > addresses.length) throw new Error(`${prefix}XFF_DEPTH is ${xffDepth}, but only found ${addresses.length} addresses`);
    return addresses[addresses.length - xffDepth]!.trim();
  };
}
