// The light Request's `headers`: a Headers (its prototype chain runs through
// Headers.prototype) that reads the Tachyon request's own headers, because copying them into
// undici's Headers costs about as much as the rest of its Request: each name and value is
// validated, lower-cased and stored, for handlers that then read two or three of them
// (SvelteKit: accept, origin, content-type, cookie). In-process on the loaded 2-core VM
// (indicative), `new Headers()` from a browser's 8 headers plus two get() took 10.3 µs where
// the whole `new Request(url, { method, headers })` with them took 13.5 µs; a get() here is a
// record lookup (or one uWS getHeader while the handler runs synchronously). The first change
// (set, append, delete) copies them into a real Headers, and every call goes there from then on.
import type { Request } from '../http/io/request.ts';
import { forwardTheRest } from './forward.ts';

const WebHeaders = globalThis.Headers;

export class LightHeaders {
  readonly #req: Request;
  #real: Headers | undefined = undefined;

  constructor(req: Request) {
    this.#req = req;
  }

  get(name: string): string | null {
    if (this.#real !== undefined) return this.#real.get(name);
    return this.#req.header(name) ?? null;
  }
  has(name: string): boolean {
    if (this.#real !== undefined) return this.#real.has(name);
    return this.#req.header(name) !== undefined;
  }
  getSetCookie(): string[] {
    if (this.#real !== undefined) return this.#real.getSetCookie();
    const value = this.#req.header('set-cookie');
    return value === undefined ? [] : [value];
  }
  set(name: string, value: string): void {
    this.#writable().set(name, value);
  }
  append(name: string, value: string): void {
    this.#writable().append(name, value);
  }
  delete(name: string): void {
    this.#writable().delete(name);
  }
  forEach(callback: (value: string, name: string, parent: Headers) => void, thisArg?: unknown): void {
    for (const [name, value] of this.entries()) callback.call(thisArg, value, name, this as unknown as Headers);
  }
  /** Sorted by name, as Headers iterate (the names are lower-case already). */
  *entries(): Generator<[string, string], void, undefined> {
    if (this.#real !== undefined) {
      yield* this.#real.entries();
      return;
    }
    const all = this.#req.headers;
    for (const name of Object.keys(all).sort()) yield [name, all[name]!];
  }
  *keys(): Generator<string, void, undefined> {
    for (const [name] of this.entries()) yield name;
  }
  *values(): Generator<string, void, undefined> {
    for (const [, value] of this.entries()) yield value;
  }
  [Symbol.iterator](): Generator<[string, string], void, undefined> {
    return this.entries();
  }

  /** What a real Request is built with: the request's record, or the changed copy. */
  get init(): Headers | Record<string, string> {
    return this.#real ?? this.#req.headers;
  }

  #writable(): Headers {
    return (this.#real ??= new WebHeaders(this.#req.headers));
  }

  static {
    // The inspector's hook and any member a later Node adds: to a real copy.
    forwardTheRest<LightHeaders>(LightHeaders.prototype, WebHeaders.prototype, (self) => self.#writable());
  }
}
