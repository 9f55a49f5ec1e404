// The OpenAPI 3.1 document of an app, from its route table (`app.routes()`): one operation
// per HTTP route and method, parameters and bodies from the route's schemas, replies from
// `response`, and the 400/413/415 answers the framework itself gives validated routes.
import type { App, HttpRouteInfo, RouteInfo, Schema } from '@tachyon/server';
import { checkOpenApiOptions, checkSecurity, type OpenApiOptions, type TagObject } from './options.ts';
import { SchemaConverter, type JsonSchema } from './schema.ts';
import { frameworkErrors } from './errors.ts';
import { documentRoutes } from './document-routes.ts';

export type OpenApiDocument = Record<string, unknown> & { openapi: '3.1.0'; paths: Record<string, Record<string, unknown>> };

/** What generation reads: an app (its routes and logger) or a route table. */
export type RouteSource = (Pick<App, 'routes'> & { readonly logger?: App['logger'] }) | readonly RouteInfo[];

const MEDIA = {
  json: 'application/json',
  urlencoded: 'application/x-www-form-urlencoded',
  multipart: 'multipart/form-data',
  text: 'text/plain',
} as const;
/** What an `any()` route is documented as: the methods an API client calls (HEAD and OPTIONS are implicit). */
const ANY_METHODS = ['get', 'post', 'put', 'patch', 'delete'] as const;
/** Header parameters OpenAPI ignores (they come from the content and security fields). */
const IGNORED_HEADERS = new Set(['accept', 'content-type', 'authorization']);
const WILDCARD_NAME = 'wildcard';

export function routesOf(source: RouteSource): readonly RouteInfo[] {
  if (Array.isArray(source)) return source as readonly RouteInfo[];
  if (typeof (source as { routes?: unknown }).routes === 'function') return (source as Pick<App, 'routes'>).routes();
  throw new TypeError('expected an App (with routes()) or the array app.routes() returns');
}

export function warnerOf(source: RouteSource, onWarning: ((m: string) => void) | undefined): (message: string) => void {
  if (onWarning !== undefined) return onWarning;
  const logger = Array.isArray(source) ? undefined : (source as { logger?: App['logger'] }).logger;
  if (logger !== undefined) return (message) => logger.warn(message);
  return (message) => process.emitWarning(message, 'TachyonOpenApiWarning');
}

/**
 * The OpenAPI 3.1 document of `source` (an app, or `app.routes()`), as a plain object: for
 * build scripts and tests. Of an app, the routes serving documents are left out.
 */
export function generateOpenApi(source: RouteSource, options: OpenApiOptions): OpenApiDocument {
  checkOpenApiOptions(options);
  const exclude: ReadonlySet<string> = Array.isArray(source) ? new Set() : documentRoutes(source).keys;
  const warn = warnerOf(source, options.onWarning);
  const schemas = new SchemaConverter(warn);
  const errors = frameworkErrors(schemas);
  const paths: Record<string, Record<string, unknown>> = {};
  const tagsUsed: string[] = [];
  const http = routesOf(source).filter((r): r is HttpRouteInfo => r.kind === 'http' && r.docs.hide !== true);
  // Explicit methods first, so an any() route on the same path fills only the methods left.
  http.sort((a, b) => Number(a.method === 'ANY') - Number(b.method === 'ANY'));
  const operationIds = declaredOperationIds(http, exclude);
  for (const route of http) {
    if (exclude.has(`${route.method} ${route.path}`)) continue;
    const { path, wildcard } = templatePath(route);
    const item = (paths[path] ??= {});
    const methods = route.method === 'ANY' ? ANY_METHODS.filter((m) => item[m] === undefined) : [route.method.toLowerCase()];
    for (const method of methods) {
      const op = operation(route, method, uniqueOperationId(route, method, operationIds), wildcard, schemas, errors, options);
      for (const tag of route.docs.tags ?? []) if (!tagsUsed.includes(tag)) tagsUsed.push(tag);
      item[method] = op;
    }
  }
  const doc: OpenApiDocument = { openapi: '3.1.0', info: { ...options.info }, paths };
  if (options.servers !== undefined) doc.servers = options.servers;
  const tags = documentTags(options.tags, tagsUsed);
  if (tags.length > 0) doc.tags = tags;
  if (options.externalDocs !== undefined) doc.externalDocs = options.externalDocs;
  if (options.security !== undefined) doc.security = options.security;
  const components: Record<string, unknown> = {};
  if (Object.keys(schemas.components).length > 0) components.schemas = sortKeys(schemas.components);
  if (errors.used.size > 0) components.responses = errors.responses();
  if (options.securitySchemes !== undefined) components.securitySchemes = options.securitySchemes;
  if (Object.keys(components).length > 0) doc.components = components;
  // Paths in table order are hard to scan: sorted, the document reads like the API.
  doc.paths = sortKeys(paths);
  return doc;
}

/** `/users/:id` → `/users/{id}`; a trailing `*` becomes a `{wildcard}` parameter. */
function templatePath(route: HttpRouteInfo): { path: string; wildcard: string | undefined } {
  let wildcard: string | undefined;
  const path = route.path
    .split('/')
    .map((seg) => {
      if (seg === '*') {
        wildcard = route.params.includes(WILDCARD_NAME) ? `${WILDCARD_NAME}_` : WILDCARD_NAME;
        return `{${wildcard}}`;
      }
      return seg.startsWith(':') ? `{${seg.slice(1)}}` : seg;
    })
    .join('/');
  return { path, wildcard };
}

function operation(
  route: HttpRouteInfo,
  method: string,
  operationId: string,
  wildcard: string | undefined,
  schemas: SchemaConverter,
  errors: ReturnType<typeof frameworkErrors>,
  options: OpenApiOptions,
): Record<string, unknown> {
  const where = `${route.method} ${route.path}`;
  const d = route.docs;
  const op: Record<string, unknown> = {};
  if (d.tags !== undefined && d.tags.length > 0) op.tags = [...d.tags];
  if (d.summary !== undefined) op.summary = d.summary;
  if (d.description !== undefined) op.description = d.description;
  op.operationId = operationId;
  const parameters = [
    ...pathParameters(route, wildcard, schemas, where),
    ...objectParameters(route.schemas.query, 'query', schemas, where),
    ...objectParameters(route.schemas.headers, 'header', schemas, where),
    ...objectParameters(route.schemas.cookies, 'cookie', schemas, where),
  ];
  if (parameters.length > 0) op.parameters = parameters;
  const body = route.schemas.body;
  if (body !== undefined) {
    const schema = schemas.convert(body, 'input', `${where} body`);
    const content: Record<string, unknown> = {};
    for (const kind of route.consumes) content[MEDIA[kind]] = { schema };
    op.requestBody = { required: true, content };
  }
  op.responses = responses(route, schemas, errors, where);
  if (d.deprecated === true) op.deprecated = true;
  if (d.security !== undefined) {
    checkSecurity(`openapi(): ${where}`, 'the route security', d.security, options.securitySchemes);
    op.security = d.security;
  }
  return op;
}

function pathParameters(route: HttpRouteInfo, wildcard: string | undefined, schemas: SchemaConverter, where: string): JsonSchema[] {
  const declared = route.schemas.params === undefined ? undefined : properties(route.schemas.params, schemas, `${where} params`);
  const out: JsonSchema[] = route.params.map((name) => {
    const schema = declared?.properties[name] ?? { type: 'string' };
    return withDescription({ name, in: 'path', required: true, schema }, schema);
  });
  if (wildcard !== undefined) {
    const prefix = route.path.slice(0, -1);
    out.push({
      name: wildcard,
      in: 'path',
      required: true,
      description: `The rest of the path after \`${prefix}\` (\`req.params['*']\`): may be empty and may contain "/".`,
      schema: { type: 'string' },
    });
  }
  return out;
}

/** One parameter per property of an object schema (query, headers, cookies). */
function objectParameters(
  schema: Schema | undefined,
  where: 'query' | 'header' | 'cookie',
  schemas: SchemaConverter,
  route: string,
): JsonSchema[] {
  if (schema === undefined) return [];
  const target = where === 'header' ? 'headers' : where === 'cookie' ? 'cookies' : 'query';
  const obj = properties(schema, schemas, `${route} ${target}`);
  if (obj === undefined) {
    // Not a plain object (a union, a permissive schema): one form-exploded parameter.
    return where === 'query'
      ? [{ name: 'query', in: 'query', style: 'form', explode: true, schema: schemas.convert(schema, 'input', `${route} query`) }]
      : [];
  }
  const out: JsonSchema[] = [];
  for (const [name, prop] of Object.entries(obj.properties)) {
    if (where === 'header' && IGNORED_HEADERS.has(name.toLowerCase())) continue;
    out.push(withDescription({ name, in: where, required: obj.required.includes(name), schema: prop }, prop));
  }
  return out;
}

function properties(
  schema: Schema,
  schemas: SchemaConverter,
  where: string,
): { properties: Record<string, JsonSchema>; required: string[] } | undefined {
  const json = schemas.resolve(schemas.convert(schema, 'input', where));
  if (json.type !== 'object' || typeof json.properties !== 'object' || json.properties === null) return undefined;
  return {
    properties: json.properties as Record<string, JsonSchema>,
    required: Array.isArray(json.required) ? (json.required as string[]) : [],
  };
}

function withDescription(param: JsonSchema, schema: JsonSchema): JsonSchema {
  if (typeof schema.description === 'string') param.description = schema.description;
  return param;
}

function responses(
  route: HttpRouteInfo,
  schemas: SchemaConverter,
  errors: ReturnType<typeof frameworkErrors>,
  where: string,
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [status, schema] of Object.entries(route.response) as [string, Schema][]) {
    out[status] = {
      description: statusDescription(status),
      content: { 'application/json': { schema: schemas.convert(schema, 'output', `${where} response ${status}`) } },
    };
  }
  if (Object.keys(out).length === 0) out.default = { description: 'The reply (the route declares no `response` schemas).' };
  const s = route.schemas;
  const validated =
    s.params !== undefined || s.query !== undefined || s.body !== undefined || s.headers !== undefined || s.cookies !== undefined;
  if (validated && out['400'] === undefined) out['400'] = errors.ref('400');
  if (s.body !== undefined) {
    if (out['413'] === undefined) out['413'] = errors.payloadTooLarge(route.bodyLimit);
    if (out['415'] === undefined) out['415'] = errors.unsupported(route.consumes.map((k) => MEDIA[k]));
  }
  return out;
}

const STATUS_TEXT: Record<string, string> = {
  '200': 'OK',
  '201': 'Created',
  '202': 'Accepted',
  '204': 'No Content',
  '301': 'Moved Permanently',
  '302': 'Found',
  '304': 'Not Modified',
  '400': 'Bad Request',
  '401': 'Unauthorized',
  '403': 'Forbidden',
  '404': 'Not Found',
  '409': 'Conflict',
  '422': 'Unprocessable Content',
  '429': 'Too Many Requests',
  '500': 'Internal Server Error',
  '503': 'Service Unavailable',
  '1XX': 'Informational',
  '2XX': 'Success',
  '3XX': 'Redirection',
  '4XX': 'Client error',
  '5XX': 'Server error',
  default: 'Any other status',
};

function statusDescription(status: string): string {
  return STATUS_TEXT[status] ?? `Status ${status}`;
}

/** The declared operationIds (taken first, so a generated one never takes a declared name), by id → route. */
function declaredOperationIds(routes: readonly HttpRouteInfo[], exclude: ReadonlySet<string>): Map<string, string> {
  const seen = new Map<string, string>();
  for (const route of routes) {
    const declared = route.docs.operationId;
    if (declared === undefined || exclude.has(`${route.method} ${route.path}`)) continue;
    const where = `${route.method} ${route.path}`;
    for (const id of route.method === 'ANY' ? ANY_METHODS.map((m) => `${declared}_${m}`) : [declared]) {
      const other = seen.get(id);
      if (other !== undefined) throw new Error(`openapi(): operationId "${id}" of ${where} is already used by ${other}`);
      seen.set(id, where);
    }
  }
  return seen;
}

/**
 * The declared operationId (`_get`, `_post`… added for an any() route), else one made from
 * the method and the path (`GET /users/:id` → `getUsersById`), unique in the document:
 * tools name client methods and links after it.
 */
function uniqueOperationId(route: HttpRouteInfo, method: string, seen: Map<string, string>): string {
  const declared = route.docs.operationId;
  if (declared !== undefined) return route.method === 'ANY' ? `${declared}_${method}` : declared;
  const words = route.path
    .split('/')
    .filter((s) => s !== '')
    .map((s) =>
      s === '*'
        ? 'Wildcard'
        : s.startsWith(':')
          ? `By${capital(s.slice(1))}`
          : s
              .split(/[^A-Za-z0-9]+/)
              .map(capital)
              .join(''),
    );
  const base = method + (words.length === 0 ? 'Root' : words.join(''));
  let id = base;
  for (let i = 2; seen.has(id); i++) id = `${base}${i}`;
  seen.set(id, `${route.method} ${route.path}`);
  return id;
}

function capital(s: string): string {
  return s.charAt(0).toUpperCase() + s.slice(1);
}

function documentTags(declared: readonly TagObject[] | undefined, used: readonly string[]): TagObject[] {
  const out = [...(declared ?? [])];
  for (const name of used) if (!out.some((t) => t.name === name)) out.push({ name });
  return out;
}

function sortKeys<T>(o: Record<string, T>): Record<string, T> {
  return Object.fromEntries(Object.entries(o).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}
