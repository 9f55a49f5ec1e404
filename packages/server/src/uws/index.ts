// The uws/ folder is the only place that loads uWebSockets.js (load.ts does, with the glibc
// fix); this module holds our own declarations of the parts we use: the shipped ones are stale.
import { loadAddon } from './load.ts';

export type RecognizedString = string | ArrayBuffer | Uint8Array;

export interface UwsRequest {
  /** A key as bytes (a Uint8Array made once) skips the addon's per-call UTF-8 copy of a string key. */
  getHeader(lowerCaseKey: RecognizedString): string;
  getParameter(index: number): string | undefined;
  getUrl(): string;
  getMethod(): string;
  getCaseSensitiveMethod(): string;
  getQuery(): string | undefined;
  forEach(cb: (key: string, value: string) => void): void;
  setYield(yield_: boolean): UwsRequest;
}

export interface UwsResponse {
  writeStatus(status: RecognizedString): UwsResponse;
  writeHeader(key: RecognizedString, value: RecognizedString): UwsResponse;
  write(chunk: RecognizedString): boolean;
  end(body?: RecognizedString, closeConnection?: boolean): UwsResponse;
  endWithoutBody(reportedContentLength?: number, closeConnection?: boolean): UwsResponse;
  tryEnd(chunk: RecognizedString, totalSize: number): [boolean, boolean];
  close(): UwsResponse;
  getWriteOffset(): number;
  onWritable(handler: (offset: number) => boolean): UwsResponse;
  onAborted(handler: () => void): UwsResponse;
  onData(handler: (chunk: ArrayBuffer, isLast: boolean) => void): UwsResponse;
  getRemoteAddressAsText(): ArrayBuffer;
  getProxiedRemoteAddressAsText(): ArrayBuffer;
  getRemotePort(): number;
  pause(): void;
  resume(): void;
  cork(cb: () => void): UwsResponse;
  upgrade(userData: object, secWebSocketKey: string, secWebSocketProtocol: string, secWebSocketExtensions: string, context: object): void;
}

export type UwsHandler = (res: UwsResponse, req: UwsRequest) => void;
export type UwsListenSocket = object;

export interface UwsAppOptions {
  key_file_name?: string;
  cert_file_name?: string;
  ca_file_name?: string;
  passphrase?: string;
  dh_params_file_name?: string;
  ssl_prefer_low_memory_usage?: boolean;
}

export interface UwsWebSocket {
  /** 1: sent, 0: sent but backpressure built up, 2: dropped (over maxBackpressure). */
  send(message: RecognizedString, isBinary?: boolean, compress?: boolean): number;
  end(code?: number, shortMessage?: RecognizedString): void;
  close(): void;
  getBufferedAmount(): number;
  subscribe(topic: RecognizedString): boolean;
  unsubscribe(topic: RecognizedString): boolean;
  isSubscribed(topic: RecognizedString): boolean;
  getTopics(): string[];
  publish(topic: RecognizedString, message: RecognizedString, isBinary?: boolean, compress?: boolean): boolean;
  cork(cb: () => void): UwsWebSocket;
  getUserData(): Record<string, unknown>;
}

export interface UwsWebSocketBehavior {
  compression?: number;
  maxPayloadLength?: number;
  idleTimeout?: number;
  maxBackpressure?: number;
  closeOnBackpressureLimit?: boolean;
  sendPingsAutomatically?: boolean;
  maxLifetime?: number;
  upgrade?: (res: UwsResponse, req: UwsRequest, context: object) => void;
  open?: (ws: UwsWebSocket) => void;
  message?: (ws: UwsWebSocket, message: ArrayBuffer, isBinary: boolean) => void;
  drain?: (ws: UwsWebSocket) => void;
  dropped?: (ws: UwsWebSocket, message: ArrayBuffer, isBinary: boolean) => void;
  close?: (ws: UwsWebSocket, code: number, message: ArrayBuffer) => void;
}

export interface UwsApp {
  ws(pattern: string, behavior: UwsWebSocketBehavior): UwsApp;
  publish(topic: RecognizedString, message: RecognizedString, isBinary?: boolean, compress?: boolean): boolean;
  numSubscribers(topic: RecognizedString): number;
  get(pattern: string, handler: UwsHandler): UwsApp;
  post(pattern: string, handler: UwsHandler): UwsApp;
  put(pattern: string, handler: UwsHandler): UwsApp;
  patch(pattern: string, handler: UwsHandler): UwsApp;
  del(pattern: string, handler: UwsHandler): UwsApp;
  head(pattern: string, handler: UwsHandler): UwsApp;
  options(pattern: string, handler: UwsHandler): UwsApp;
  any(pattern: string, handler: UwsHandler): UwsApp;
  listen(host: string, port: number, options: number, cb: (socket: UwsListenSocket | false) => void): UwsApp;
  addServerName(hostname: string, options: UwsAppOptions): UwsApp;
  /** Selects the router (per SNI server name) that later registrations go to. */
  domain(serverName: string): UwsApp;
  close(): UwsApp;
  /** This app's descriptor, for an acceptor app in another thread (worker threads). */
  getDescriptor(): number;
  /** Acceptor side: hand accepted connections to the app behind `descriptor` (round-robin). */
  addChildAppDescriptor(descriptor: number): UwsApp;
  removeChildAppDescriptor(descriptor: number): UwsApp;
}

export interface UwsPart {
  name: string;
  data: ArrayBuffer;
  type?: string;
  filename?: string;
}

interface UwsModule {
  LIBUS_LISTEN_EXCLUSIVE_PORT: number;
  DISABLED: number;
  SHARED_COMPRESSOR: number;
  App(options?: UwsAppOptions): UwsApp;
  SSLApp(options: UwsAppOptions): UwsApp;
  us_listen_socket_close(socket: UwsListenSocket): void;
  us_socket_local_port(socket: UwsListenSocket): number;
  getParts(body: RecognizedString, contentType: RecognizedString): UwsPart[] | undefined;
}

/** uWS's own default is 4 KiB; Node's is 16 KiB, which more real clients fit in. */
export const DEFAULT_MAX_HEADER_SIZE = 16 * 1024;
const HEADER_SIZE_ENV = 'UWS_HTTP_MAX_HEADERS_SIZE';

let loaded: UwsModule | undefined;
let loadedHeaderSize = 0;

/**
 * Loads the addon on first use. The header size limit is read by the C++ core once,
 * when the addon loads, so it is process-wide: the first App decides it.
 */
export function loadUws(maxHeaderSize?: number): UwsModule {
  if (loaded) {
    if (maxHeaderSize !== undefined && maxHeaderSize !== loadedHeaderSize) {
      throw new Error(`maxHeaderSize is process-wide and already set to ${loadedHeaderSize}; cannot change it to ${maxHeaderSize}`);
    }
    return loaded;
  }
  const fromEnv = Number(process.env[HEADER_SIZE_ENV]);
  loadedHeaderSize = maxHeaderSize ?? (fromEnv > 0 ? fromEnv : DEFAULT_MAX_HEADER_SIZE);
  process.env[HEADER_SIZE_ENV] = String(loadedHeaderSize);
  loaded = loadAddon<UwsModule>();
  return loaded;
}

/** Decodes an ArrayBuffer of Latin-1/ASCII text (addresses) without a TextDecoder. */
export function asciiText(buf: ArrayBuffer): string {
  return Buffer.from(buf).toString('latin1');
}
