// The options of openapi() and asyncapi(), and their checks: a misspelled key or a missing
// title throws when the handler is made, naming the option, not when the document is read.
import type { Schema } from '@tachyon/server';
import { checkKnownKeys } from '@tachyon/server/options-check';

export interface InfoObject {
  title: string;
  version: string;
  description?: string;
  summary?: string;
  termsOfService?: string;
  contact?: { name?: string; url?: string; email?: string };
  license?: { name: string; identifier?: string; url?: string };
}

export interface ServerObject {
  url: string;
  description?: string;
  variables?: Record<string, { default: string; enum?: string[]; description?: string }>;
}

/** An OpenAPI security scheme (`{ type: 'http', scheme: 'bearer' }`, `{ type: 'apiKey', in: 'header', name: 'x-api-key' }`, …). */
export type SecurityScheme = Record<string, unknown> & { type: 'apiKey' | 'http' | 'mutualTLS' | 'oauth2' | 'openIdConnect' };
export type SecurityRequirement = Readonly<Record<string, readonly string[]>>;

export interface TagObject {
  name: string;
  description?: string;
  externalDocs?: { url: string; description?: string };
}

export interface OpenApiOptions {
  info: InfoObject;
  servers?: ServerObject[];
  /** Security schemes by name, declared once; routes name them in `security`. */
  securitySchemes?: Record<string, SecurityScheme>;
  /** Requirements for every operation that declares none (`[{ bearer: [] }]`). */
  security?: SecurityRequirement[];
  /** Descriptions of tags (tags used by routes and not listed here are added by name). */
  tags?: TagObject[];
  externalDocs?: { url: string; description?: string };
  /** Where warnings go (a schema that cannot be converted). Default: the app's logger, at warn. */
  onWarning?: (message: string) => void;
}

/** `openapi.serve()`: the document's route, and the reference page's. */
export interface ServeOptions extends OpenApiOptions {
  /** Where the document is served. Default `/openapi.json`. */
  path?: string;
  /** Also serve a reference page (Swagger UI, from memory) at this path, e.g. `'/docs'`. */
  docs?: string;
}

export interface AsyncApiOptions {
  info: InfoObject;
  /** Servers by name (`{ production: { host: 'api.example.com', protocol: 'wss' } }`). Default: none. */
  servers?: Record<string, { host: string; protocol: string; pathname?: string; description?: string }>;
  /**
   * What topics carry, by topic pattern: `{ 'room:*': { events: { chat: ChatSchema } } }`.
   * The app's own `app.topic(pattern, { events })` declarations are read without it; this adds
   * patterns, or replaces a declared pattern's events. Topics without either are documented
   * with the generic event envelope.
   */
  topics?: TopicEvents;
  /** Where warnings go. Default: the app's logger, at warn. */
  onWarning?: (message: string) => void;
}

/** `asyncapi.serve()`: the document's route. */
export interface AsyncApiServeOptions extends AsyncApiOptions {
  /** Where the document is served. Default `/asyncapi.json`. */
  path?: string;
}

export type TopicEvents = Readonly<Record<string, { readonly events: Readonly<Record<string, Schema>> }>>;

const OPENAPI_KEYS = Object.keys({
  info: true,
  servers: true,
  securitySchemes: true,
  security: true,
  tags: true,
  externalDocs: true,
  onWarning: true,
} satisfies Record<keyof OpenApiOptions, true>);
const ASYNCAPI_KEYS = Object.keys({ info: true, servers: true, topics: true, onWarning: true } satisfies Record<
  keyof AsyncApiOptions,
  true
>);
const INFO_KEYS = Object.keys({
  title: true,
  version: true,
  description: true,
  summary: true,
  termsOfService: true,
  contact: true,
  license: true,
} satisfies Record<keyof InfoObject, true>);

function fail(where: string, message: string): never {
  throw new TypeError(`${where}: ${message}`);
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function checkInfo(where: string, info: unknown): void {
  if (!isObject(info)) fail(where, 'info must be an object: { title, version }');
  checkKnownKeys(`${where}: info`, info, INFO_KEYS);
  if (typeof info.title !== 'string' || info.title === '') fail(where, 'info.title must be a non-empty string');
  if (typeof info.version !== 'string' || info.version === '')
    fail(where, 'info.version must be a non-empty string (the API version, e.g. "1.0.0")');
}

export function checkOpenApiOptions(options: unknown, where = 'openapi()', withDocs = false): asserts options is OpenApiOptions {
  if (!isObject(options)) fail(where, 'options must be an object: { info: { title, version } }');
  checkKnownKeys(where, options, [...OPENAPI_KEYS, 'path', 'docs']);
  checkInfo(where, options.info);
  const o = options as Partial<ServeOptions>;
  if (o.servers !== undefined && !(Array.isArray(o.servers) && o.servers.every((s) => isObject(s) && typeof s.url === 'string')))
    fail(where, 'servers must be an array of { url, description? }');
  if (o.securitySchemes !== undefined) {
    if (!isObject(o.securitySchemes)) fail(where, 'securitySchemes must be an object of schemes by name');
    for (const [name, scheme] of Object.entries(o.securitySchemes))
      if (!isObject(scheme) || typeof scheme.type !== 'string')
        fail(
          where,
          `securitySchemes.${name} must be a security scheme object with a type ('http', 'apiKey', 'oauth2', 'openIdConnect', 'mutualTLS')`,
        );
  }
  if (o.security !== undefined) checkSecurity(where, 'security', o.security, o.securitySchemes);
  if (o.tags !== undefined && !(Array.isArray(o.tags) && o.tags.every((t) => isObject(t) && typeof t.name === 'string')))
    fail(where, 'tags must be an array of { name, description? }');
  if (o.externalDocs !== undefined && !(isObject(o.externalDocs) && typeof o.externalDocs.url === 'string'))
    fail(where, 'externalDocs must be { url, description? }');
  if (o.docs !== undefined) checkLiteralPath(where, 'docs', o.docs);
  if (o.path !== undefined) checkLiteralPath(where, 'path', o.path);
  if (!withDocs && o.path !== undefined && o.docs === undefined)
    fail(where, 'path: only the reference page uses it (where it loads the document): pass docs too, or use openapi.serve()');
  if (o.onWarning !== undefined && typeof o.onWarning !== 'function') fail(where, 'onWarning must be a function (message) => void');
}

export function checkLiteralPath(where: string, what: string, path: unknown): void {
  if (typeof path !== 'string' || !path.startsWith('/') || /[:*]/.test(path))
    fail(where, `${what} must be a literal path starting with "/" (e.g. '/docs'), got ${JSON.stringify(path)}`);
}

/** Requirements must name declared schemes: a typo would document an unusable scheme. */
export function checkSecurity(where: string, what: string, security: unknown, schemes: Record<string, unknown> | undefined): void {
  if (!Array.isArray(security) || !security.every(isObject)) fail(where, `${what} must be an array of { schemeName: scopes[] }`);
  for (const requirement of security as Record<string, unknown>[])
    for (const [name, scopes] of Object.entries(requirement)) {
      if (schemes === undefined || !(name in schemes))
        fail(where, `${what} names the security scheme "${name}", which is not declared in securitySchemes`);
      if (!Array.isArray(scopes) || !scopes.every((s) => typeof s === 'string'))
        fail(where, `${what}: the scopes of "${name}" must be an array of strings`);
    }
}

export function checkAsyncApiOptions(options: unknown, where = 'asyncapi()', withPath = false): asserts options is AsyncApiOptions {
  if (!isObject(options)) fail(where, 'options must be an object: { info: { title, version } }');
  checkKnownKeys(where, options, withPath ? [...ASYNCAPI_KEYS, 'path'] : ASYNCAPI_KEYS);
  checkInfo(where, options.info);
  const o = options as Partial<AsyncApiOptions>;
  if (o.servers !== undefined) {
    if (!isObject(o.servers)) fail(where, 'servers must be an object of { host, protocol } by name');
    for (const [name, s] of Object.entries(o.servers))
      if (!isObject(s) || typeof s.host !== 'string' || typeof s.protocol !== 'string')
        fail(where, `servers.${name} must be { host, protocol, pathname?, description? }`);
  }
  if (o.topics !== undefined) {
    if (!isObject(o.topics)) fail(where, "topics must be an object: { 'room:*': { events: { name: schema } } }");
    for (const [pattern, t] of Object.entries(o.topics))
      if (!isObject(t) || !isObject(t.events) || !Object.values(t.events).every((s) => isObject(s) && '~standard' in s))
        fail(where, `topics[${JSON.stringify(pattern)}] must be { events: { name: Standard Schema } }`);
  }
  if (o.onWarning !== undefined && typeof o.onWarning !== 'function') fail(where, 'onWarning must be a function (message) => void');
}
