// @tachyon/openapi: the app's contract as documents. OpenAPI 3.1 for its HTTP routes,
// AsyncAPI 3.0 for its WebSocket routes, both generated from the route table (docs/openapi.md).
export { openapi, asyncapi, type DocumentHandler } from './serve.ts';
export { generateOpenApi, type OpenApiDocument, type RouteSource } from './openapi.ts';
export { generateAsyncApi, type AsyncApiDocument } from './asyncapi.ts';
export type {
  AsyncApiOptions,
  AsyncApiServeOptions,
  InfoObject,
  OpenApiOptions,
  SecurityRequirement,
  SecurityScheme,
  ServerObject,
  TagObject,
  ServeOptions,
  TopicEvents,
} from './options.ts';
export type { JsonSchema } from './schema.ts';
