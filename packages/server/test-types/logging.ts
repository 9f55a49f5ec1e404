// Type tests for request ids and access logs (docs/logging.md).
import { App, generateRequestId, type AccessLogOptions, type Logger, type RequestIdOptions } from '@tachyon/server';
import { pino } from 'pino';

type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
const expectType = <T extends true>(_ok: T) => {};

// pino is a Logger (child() included).
const logger: Logger = pino();
new App({ logger, requestId: true, accessLog: true });
const ids: RequestIdOptions = { header: 'x-trace-id', trustHeader: true, generate: () => generateRequestId() };
const access: AccessLogOptions = { level: 'debug', skip: (req) => req.path === '/healthz' };
const app = new App({ logger, requestId: ids, accessLog: access });
// @ts-expect-error: generate returns a string
new App({ requestId: { generate: () => 42 } });
// @ts-expect-error: info or debug
new App({ accessLog: { level: 'trace' } });

app.get('/users/:id', (req) => {
  expectType<Equal<typeof req.id, string>>(true);
  expectType<Equal<typeof req.log, Logger>>(true);
  req.log.info({ user: req.params.id }, 'looked up');
  // @ts-expect-error: read-only
  req.id = 'x';
  return { id: req.id };
});
