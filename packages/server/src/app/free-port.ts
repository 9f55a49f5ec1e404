// Port 0 ("any free port") is resolved here instead of by uWS. uSockets sets SO_REUSEADDR
// only on listen sockets with an explicit port, and accepted sockets inherit the listener's
// options: after a port-0 server served keep-alive clients and closed, their TIME_WAIT
// sockets (up to 60 s) made a new listen on that same port fail with "address in use". A
// port picked first and then listened on explicitly gets SO_REUSEADDR, so close() followed by
// listen() on the same port works (tests, hot reload, a client's reconnect test).
import { createServer } from 'node:net';

/** A port that is free on `host` right now (the OS picks it). */
export function pickFreePort(host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.unref();
    probe.once('error', reject);
    probe.listen({ port: 0, host, exclusive: true }, () => {
      const address = probe.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      probe.close(() => (port > 0 ? resolve(port) : reject(new Error(`could not pick a free port on ${host}`))));
    });
  });
}
