// Reading W3C trace context (`traceparent`, `tracestate`, or whatever the registered
// propagator reads) from a Tachyon request. The getter goes through `req.header()`, which
// reads straight from the uWS request while the callback runs: no header object is built.
import type { TextMapGetter } from '@opentelemetry/api';
import type { Request } from '@tachyon/server';

export const requestHeaders: TextMapGetter<Request> = {
  keys: (req) => Object.keys(req.headers),
  get: (req, key) => req.header(key),
};
