import { statusText } from './status.ts';

/** An error that carries the HTTP status it should be answered with. */
export class HttpError extends Error {
  readonly status: number;
  /** Safe to show to clients; defaults to true for 4xx, false for 5xx. */
  readonly expose: boolean;
  readonly headers: Record<string, string> | undefined;

  constructor(status: number, message?: string, options?: { cause?: unknown; expose?: boolean; headers?: Record<string, string> }) {
    super(message ?? statusText(status), options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'HttpError';
    this.status = status;
    this.expose = options?.expose ?? status < 500;
    this.headers = options?.headers;
  }
}

export type ValidationTarget = 'params' | 'query' | 'body' | 'headers' | 'cookies';

export interface ValidationIssue {
  path: (string | number)[];
  message: string;
}

/** Input failed a route schema. `cause` is the validator's own error (a ZodError for Zod). */
export class ValidationError extends HttpError {
  readonly target: ValidationTarget;
  readonly issues: ValidationIssue[];

  constructor(target: ValidationTarget, issues: ValidationIssue[], cause?: unknown) {
    super(400, `Invalid ${target}`, { cause });
    this.name = 'ValidationError';
    this.target = target;
    this.issues = issues;
  }
}

/**
 * Nobody answered within the route's timeout: 503 to the client ("Request timed out"), and a
 * log line saying what the handler did (`detail`). @internal
 */
export class RequestTimeoutError extends HttpError {
  readonly timeout: number;
  /** True when the chain returned a promise that has not settled; false when it returned without answering. */
  readonly pending: boolean;
  readonly detail: string;

  constructor(timeout: number, pending: boolean, method: string, route: string) {
    super(503, 'Request timed out', { expose: true });
    this.timeout = timeout;
    this.pending = pending;
    this.detail = pending
      ? `${method} ${route}: no answer within ${timeout} ms; the handler's promise is still pending (a slow dependency, or an await that never settles): answered 503`
      : `${method} ${route}: no answer within ${timeout} ms; the handler returned without answering and without returning a promise (forgot to return/await, or to call res.json()/res.end()?): answered 503`;
  }
}
