// Type tests for the header API plugins use (docs/response.md, docs/request.md): req.header(),
// req.hasBody, res.header(), res.vary(), prepareHeaders() + res.setHeaders().
// Every @ts-expect-error line must be an error, or the compile fails.
import { App, HttpError, PreparedHeaders, prepareHeaders, type HeaderRecord, type Middleware, type Response } from '@tachyon/server';

type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
const expectType = <T extends true>(_ok: T) => {};

const security = prepareHeaders({ 'x-frame-options': 'DENY', 'retry-after': 30, link: ['</a.css>; rel=preload', '</b.js>; rel=preload'] });
expectType<Equal<typeof security, PreparedHeaders>>(true);
expectType<Equal<typeof security.lines, readonly string[]>>(true);
expectType<Equal<typeof security.names, readonly string[]>>(true);
// @ts-expect-error: read-only
security.lines = [];
// @ts-expect-error: values are strings, numbers or lists of strings
prepareHeaders({ 'x-a': true });
// @ts-expect-error: values are strings, numbers or lists of strings
prepareHeaders({ 'x-a': [1, 2] });
const record: HeaderRecord = { 'cache-control': 'no-store' };
new PreparedHeaders(record);

const plugin: Middleware = (req, res, next) => {
  const origin = req.header('origin');
  expectType<Equal<typeof origin, string | undefined>>(true);
  expectType<Equal<typeof req.hasBody, boolean>>(true);
  // @ts-expect-error: read-only
  req.hasBody = false;
  // Every setter chains.
  const chained: Response = res.setHeaders(security).vary('Origin').header('ratelimit-remaining', 3).header('link', ['</a>', '</b>']);
  void chained;
  // @ts-expect-error: setHeaders takes a prepared set, not a record
  res.setHeaders({ 'x-a': '1' });
  // @ts-expect-error: one field name per call
  res.vary(['origin', 'accept']);
  // @ts-expect-error: header values are strings, numbers or lists of strings
  res.header('x-a', true);
  return next();
};

// The framework's own internals are not part of the published types.
const app = new App();
app.use(plugin);
app.get('/', (req, res) => {
  // @ts-expect-error: internal
  res._set('x', 'y');
  // @ts-expect-error: internal
  req._snapshot();
  return 'ok';
});

// The example of docs/middleware.md ("Writing middleware as fast as the built-ins").
export function apiKey(options: { keys: readonly string[] }): Middleware {
  if (!Array.isArray(options?.keys) || options.keys.length === 0) throw new TypeError('apiKey(): keys must be a non-empty array');
  const keys = new Set(options.keys);
  const headers = prepareHeaders({ 'cache-control': 'private, no-store', 'x-api': 'v2' });
  return (req, res, next) => {
    const key = req.header('x-api-key');
    res.vary('x-api-key');
    if (key === undefined || !keys.has(key)) throw new HttpError(401, 'Unknown API key');
    res.setHeaders(headers);
    res.header('x-api-calls-left', 42);
    return next();
  };
}
app.use(apiKey({ keys: ['k1'] }));
