// The answers Tachyon itself gives a validated route (docs/errors.md), as OpenAPI responses:
// 400 when a schema rejects the input, 413 over the body limit, 415 for a content type the
// route does not consume. Their bodies are the default error handler's JSON.
import type { SchemaConverter, JsonSchema } from './schema.ts';

const ISSUE: JsonSchema = {
  type: 'object',
  properties: {
    path: { type: 'array', items: { type: ['string', 'integer'] }, description: 'Where in the input (keys and array indexes).' },
    message: { type: 'string' },
  },
  required: ['path', 'message'],
};

/** `{ "error": "…" }` (with `message` and `stack` when the app exposes errors). */
const HTTP_ERROR: JsonSchema = {
  type: 'object',
  description: "Tachyon's error body (docs/errors.md).",
  properties: {
    error: { type: 'string', description: 'What went wrong, for clients.' },
    message: { type: 'string', description: 'Only with `exposeErrors` (development).' },
    stack: { type: 'string', description: 'Only with `exposeErrors` (development).' },
  },
  required: ['error'],
};

export function frameworkErrors(schemas: SchemaConverter) {
  const used = new Set<string>();
  let httpError: JsonSchema | undefined;
  let validationError: JsonSchema | undefined;
  const errorRef = () => (httpError ??= schemas.define('HttpError', HTTP_ERROR));
  const body = (description: string, schema: JsonSchema) => ({ description, content: { 'application/json': { schema } } });
  return {
    used,
    /** A shared response under components/responses. */
    ref(status: '400'): JsonSchema {
      used.add(status);
      validationError ??= schemas.define('ValidationError', {
        type: 'object',
        description: "Tachyon's answer to input a route schema rejected (or malformed JSON, which has no `issues`).",
        properties: {
          error: {
            type: 'string',
            examples: ['Invalid body'],
            description: '`Invalid params`, `Invalid query`, `Invalid body`, `Invalid headers` or `Invalid cookies`.',
          },
          issues: { type: 'array', items: ISSUE },
        },
        required: ['error'],
      });
      return { $ref: '#/components/responses/ValidationFailed' };
    },
    payloadTooLarge(limit: number | undefined) {
      const size = limit === undefined ? "the app's bodyLimit" : `${limit} bytes`;
      return body(`Payload Too Large: the body is over ${size}.`, errorRef());
    },
    unsupported(types: readonly string[]) {
      return body(`Unsupported Media Type: the body must be ${types.join(' or ')}.`, errorRef());
    },
    responses(): Record<string, unknown> {
      const out: Record<string, unknown> = {};
      if (used.has('400')) out.ValidationFailed = body('Bad Request: the input failed validation.', validationError!);
      return out;
    },
  };
}
