// The only module that imports uWebSockets.js. It also holds our own declarations
// of the parts we use: the ones shipped with the registry build are stale.
import { createRequire } from 'node:module';

export type RecognizedString = string | ArrayBuffer | Uint8Array;

export interface UwsRequest {
  getHeader(lowerCaseKey: string): string;
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

export interface UwsApp {
  get(pattern: string, handler: UwsHandler): UwsApp;
  post(pattern: string, handler: UwsHandler): UwsApp;
  put(pattern: string, handler: UwsHandler): UwsApp;
  patch(pattern: string, handler: UwsHandler): UwsApp;
  del(pattern: string, handler: UwsHandler): UwsApp;
  head(pattern: string, handler: UwsHandler): UwsApp;
  options(pattern: string, handler: UwsHandler): UwsApp;
  any(pattern: string, handler: UwsHandler): UwsApp;
  listen(host: string, port: number, cb: (socket: UwsListenSocket | false) => void): UwsApp;
  addServerName(hostname: string, options: UwsAppOptions): UwsApp;
  /** Selects the router (per SNI server name) that later registrations go to. */
  domain(serverName: string): UwsApp;
  close(): UwsApp;
}

export interface UwsPart {
  name: string;
  data: ArrayBuffer;
  type?: string;
  filename?: string;
}

interface UwsModule {
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
  const require = createRequire(import.meta.url);
  loaded = require('uWebSockets.js') as UwsModule;
  return loaded;
}

/** Decodes an ArrayBuffer of Latin-1/ASCII text (addresses) without a TextDecoder. */
export function asciiText(buf: ArrayBuffer): string {
  return Buffer.from(buf).toString('latin1');
}
