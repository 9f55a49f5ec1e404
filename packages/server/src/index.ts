// First, before any other module of the package runs: the Node version check.
import './node-version.ts';
export {
  App,
  type AppHooks,
  type AppLifecycleHooks,
  type AppOptions,
  type ClusterCounts,
  type ClusterMember,
  type ListenOptions,
  type MountOptions,
  type RouteDeclaration,
  type CloseOptions,
  type Server,
} from './app/app.ts';
export { Scope, definePlugin, type Plugin, type PluginMeta, type RegisterOptions } from './routing/scope.ts';
export {
  defineMiddleware,
  type MiddlewareSetup,
  type MiddlewareSetupApi,
  type WebSocketCounters,
  type MetricsGather,
} from './core/middleware-setup.ts';
export type { HttpHooks, ResponseInfo, RouteHooks } from './http/hooks.ts';
export { toJsonSchema, type JsonSchema, type JsonSchemaIo, type JsonSchemaTarget } from './http/json-schema.ts';
export type { UpgradeOutcome, WsHooks, WsRouteHooks } from './realtime/ws-hooks.ts';
export type { EventOutcome, EventOutcomeCode } from './realtime/event-outcome.ts';
export type { AppDecorations, ReplyDecorations, RequestDecorations } from './http/decoration-types.ts';
export { negotiateEncoding, type CompressionOptions, type Encoding } from './http/compression.ts';
export { toWebRequest, type FetchContext, type FetchHandler, type WebRequestOptions } from './serving/mount.ts';
export { lightResponses, sendLightResponse } from './serving/web-response.ts';
export type { TlsIdentity, TlsOptions } from './serving/tls.ts';
export { Router, type RouteHandlers, type RouteMethod } from './routing/router.ts';
export type { JoinPath, RouteMap, RoutesKey, RoutesOf, WithPrefixed, WithRoute } from './routing/contract.ts';
export type { DeclaredReply, ReplyAt, ReplyHandler, ReplyOf, ReplyResult, TypedResponse } from './http/reply-types.ts';
export type { HttpRouteInfo, MountInfo, RouteInfo, StaticInfo, WsRouteInfo } from './routing/route-info.ts';
export {
  InProcessBus,
  type Bus,
  type BusAnswer,
  type BusAsk,
  type BusDelivery,
  type BusHost,
  type BusMessage,
  type BusMeta,
} from './realtime/bus/index.ts';
export type { PublishHooks, PublishInfo } from './realtime/publish-hooks.ts';
export {
  BrokerBus,
  type BrokerBusOptions,
  type BrokerBusStats,
  type BrokerLink,
  type BrokerTransport,
} from './realtime/bus/broker/index.ts';
export { Request, type Locals } from './http/io/request.ts';
export {
  Response,
  EventStream,
  PreparedHeaders,
  prepareHeaders,
  type Body,
  type HeaderRecord,
  type StreamSource,
} from './http/io/response.ts';
export { HttpError, ValidationError, type ValidationIssue, type ValidationTarget } from './http/errors.ts';
export { ClientAbortError } from './http/io/body.ts';
export {
  defaultLogger,
  jsonLogger,
  silentLogger,
  stderrLogger,
  type Logger,
  type LogLevel,
  type StderrLoggerOptions,
} from './core/logger.ts';
export { checkKnownKeys } from './core/options-check.ts';
export { generateRequestId, type RequestIdOptions } from './http/observe/request-id.ts';
export type { AccessLogOptions } from './http/observe/access-log.ts';
export { parseCookies, serializeCookie, signCookieValue, unsignCookieValue, type CookieOptions } from './http/io/cookies.ts';
export { parseQuery, type QueryRecord, type QueryValue } from './http/io/query.ts';
export type { PathParams } from './core/path.ts';
export type { TrustProxy } from './core/settings.ts';
export type { Schema, Infer } from './http/validation.ts';
export type {
  BodyKind,
  ErrorHandler,
  Handler,
  HttpMethod,
  Middleware,
  Next,
  NotFoundHandler,
  RequestFor,
  ResponseSchemas,
  ResponseStatus,
  RouteDocs,
  RouteOptions,
  RouteTypes,
} from './http/types.ts';
export type { ClientOptions } from './serving/client-bundle.ts';
export { createStatic, lookupMime, type StaticFiles, type StaticOptions } from './serving/static/index.ts';
export { Socket, type SendResult, type SendOptions } from './realtime/socket.ts';
export { SocketRequestError, type SocketRequestErrorCode, type SocketRequestOptions } from './realtime/requests.ts';
export type { PublishOptions } from './realtime/hub.ts';
export type { TopicStats } from './realtime/topic-stats.ts';
export type { RequestAllResult } from './realtime/request-all.ts';
export type { WsBehavior, WsEvent } from './realtime/behavior.ts';
export type { BinaryEvent } from './realtime/binary-events.ts';
export type { IdempotencyOptions, KeyOutcome, SharedKeys } from './realtime/once.ts';
export type { KeyLimits } from './core/key-window.ts';
export type { FallbackOptions } from './realtime/fallback/options.ts';
export type { WsRateLimit } from './realtime/rate-limit.ts';
export type { TopicOptions, ResolvedTopicOptions } from './realtime/topics/index.ts';
export type {
  PublishArgs,
  TopicEventsFor,
  TopicPattern,
  TopicsOf,
  WithTopic,
  WithTopicOptions,
  WithWsRoute,
  WsEventContract,
  WsRoutesOf,
} from './realtime/contract.ts';
export type {
  HistoryOptions,
  HistoryStore,
  Position,
  Appended,
  HistoryRead,
  HistoryRequest,
  Unrecoverable,
} from './realtime/history/index.ts';
export { MemoryHistoryStore, judge, positionedEnvelope, newEpoch, isEpoch } from './realtime/history/index.ts';
export type { PresenceOptions, PresenceMember } from './realtime/presence/index.ts';
export { TERMINAL_CLOSE_CODES } from './realtime/protocol.ts';
export type { MultipartLimits, MultipartPart } from './http/io/multipart.ts';
export { cors, type CorsOptions, type CorsOrigin } from './plugins/cors/index.ts';
export { secureHeaders, type ContentSecurityPolicyOptions, type SecureHeadersOptions } from './plugins/secure-headers/index.ts';
export {
  rateLimit,
  MemoryRateLimitStore,
  type RateLimitHit,
  type RateLimitOptions,
  type RateLimitStore,
} from './plugins/rate-limit/index.ts';
export type { AppView } from './core/settings.ts';
export { health, type HealthCheck, type HealthOptions } from './plugins/health/index.ts';
export { metrics, type MetricsMiddleware, type MetricsOptions } from './plugins/metrics/index.ts';
export { cluster, type AppFactory, type ClusterOptions, type ClusterServer } from './cluster/index.ts';
export { ClusterRequestError, type ClusterHandler, type ClusterRequestErrorCode } from './core/rpc.ts';
export type { ClusterRequestOptions } from './app/cluster-view.ts';
