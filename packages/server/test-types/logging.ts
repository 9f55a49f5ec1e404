// Type tests for request ids and access logs (docs/logging.md).
import {
  App,
  checkKnownKeys,
  defaultLogger,
  generateRequestId,
  silentLogger,
  stderrLogger,
  type AccessLogOptions,
  type Logger,
  type LogLevel,
  type RequestIdOptions,
  type StderrLoggerOptions,
} from '@tachyon/server';
import { checkKnownKeys as standalone } from '@tachyon/server/options-check';
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

// The default logger's explicit form, and the options check plugins can use.
const level: LogLevel = 'debug';
const stderrOptions: StderrLoggerOptions = { level, format: 'pretty' };
new App({ logger: stderrLogger(stderrOptions) });
new App({ logger: defaultLogger() });
new App({ logger: silentLogger });
// @ts-expect-error: error, warn, info or debug
stderrLogger({ level: 'trace' });
// @ts-expect-error: pretty or json
stderrLogger({ format: 'xml' });
checkKnownKeys('myPlugin()', { a: 1 }, ['a', 'b']);
standalone('myPlugin()', { a: 1 }, new Set(['a']));
expectType<Equal<ReturnType<typeof checkKnownKeys>, void>>(true);
