// Request and response decorations (docs/plugins.md): fields and methods declared before the
// app starts. Each scope's routes get a subclass of Request / Response made once at startup:
// methods on its prototype, fields assigned in its constructor in declaration order, so every
// request of a route has the same shape from birth (no property is added later, no closure
// per request). A route of a scope without decorations uses the plain classes.
import { Request } from './io/request.ts';
import { Response } from './io/response.ts';

export type { AppDecorations, ReplyDecorations, RequestDecorations } from './decoration-types.ts';

/** One declared decoration: a method (on the prototype) or an initial field value. */
export interface Decoration {
  readonly name: string;
  readonly value: unknown;
}

/** Instance fields of Request that no prototype walk shows (set in its constructor). */
const REQUEST_FIELDS = new Set(['method', 'route', 'params', 'body']);

/**
 * Checks a decoration at declaration: a clash with a built-in member (`json`, `header`,
 * `params`…), a private-looking name, or a shared object value is an error.
 */
export function checkDecoration(kind: 'request' | 'reply', name: unknown, value: unknown, declared: readonly Decoration[]): void {
  const what = kind === 'request' ? 'decorateRequest' : 'decorateReply';
  if (typeof name !== 'string' || name === '') throw new TypeError(`${what}() needs a name (a non-empty string)`);
  if (name.startsWith('_')) throw new TypeError(`${what}("${name}"): names starting with "_" are reserved for the framework`);
  const base = kind === 'request' ? Request.prototype : Response.prototype;
  if (name in base || (kind === 'request' && REQUEST_FIELDS.has(name)))
    throw new TypeError(`${what}("${name}"): clashes with the built-in ${kind === 'request' ? 'Request' : 'Response'} member "${name}"`);
  if (declared.some((d) => d.name === name)) throw new TypeError(`${what}("${name}"): already declared`);
  if (typeof value === 'object' && value !== null) {
    throw new TypeError(
      `${what}("${name}"): an object would be shared by every ${kind}; declare null and set it per ${kind} in a hook (e.g. onRequest)`,
    );
  }
}

type Ctor<T> = new (...args: any[]) => T;
const cache = new WeakMap<readonly Decoration[], Ctor<unknown>>();

/** The class a scope's requests (or responses) are made from; the same class for the same list. */
export function decoratedClass<T extends Request<any> | Response>(Base: Ctor<T>, decorations: readonly Decoration[]): Ctor<T> {
  if (decorations.length === 0) return Base;
  const known = cache.get(decorations);
  if (known !== undefined) return known as Ctor<T>;
  const names: string[] = [];
  const values: unknown[] = [];
  for (const d of decorations) {
    if (typeof d.value === 'function') continue;
    names.push(d.name);
    values.push(d.value);
  }
  const count = names.length;
  const Decorated = class extends (Base as Ctor<object>) {
    constructor(...args: any[]) {
      super(...args);
      // Always the same keys in the same order: every instance takes the same hidden class.
      const self = this as Record<string, unknown>;
      for (let i = 0; i < count; i++) self[names[i]!] = values[i];
    }
  };
  for (const d of decorations) {
    if (typeof d.value === 'function')
      Object.defineProperty(Decorated.prototype, d.name, { value: d.value, writable: true, configurable: true });
  }
  cache.set(decorations, Decorated);
  return Decorated as Ctor<T>;
}
