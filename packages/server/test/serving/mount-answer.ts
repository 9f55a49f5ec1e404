// The raw bytes a mounted fetch handler answers one request with, for comparing the wire
// output of two ways of answering (light and undici Responses).
import { App, type FetchHandler, type MountOptions } from '../../src/index.ts';
import { rawRequest, start } from '../helpers.ts';

/** The raw response to one request (lines of `request` joined with \n), the Date header left out (it differs between two answers). */
export async function mountAnswer(handler: FetchHandler, request: string, options: MountOptions = {}): Promise<string> {
  const app = new App();
  app.mount('/', handler, options);
  const srv = await start(app);
  try {
    const raw = await rawRequest(srv.port, request.replaceAll('\n', '\r\n') + '\r\nConnection: close\r\n\r\n');
    return raw.replace(/^date: .*\r\n/im, '');
  } finally {
    await srv.close();
  }
}
