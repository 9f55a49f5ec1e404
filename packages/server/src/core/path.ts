// Route patterns: validation, parameter names, joining prefixes, and the type-level
// extraction of `:params` from a path string.

export interface Pattern {
  /** The pattern as uWS gets it, e.g. `/users/:id` or `/files/*`. */
  path: string;
  paramNames: string[];
  /** Segments before a trailing `*`; -1 when there is no wildcard. */
  wildcardAt: number;
}

const PARAM_NAME = /^[A-Za-z_$][\w$]*$/;

export function parsePattern(path: string): Pattern {
  if (typeof path !== 'string' || !path.startsWith('/')) throw new TypeError(`Route path must start with "/": ${JSON.stringify(path)}`);
  const segments = path === '/' ? [] : path.slice(1).split('/');
  const paramNames: string[] = [];
  let wildcardAt = -1;
  segments.forEach((seg, i) => {
    if (seg === '*') {
      if (i !== segments.length - 1) throw new TypeError(`"*" is only allowed as the last segment: ${path}`);
      wildcardAt = i;
    } else if (seg.startsWith(':')) {
      const name = seg.slice(1);
      if (!PARAM_NAME.test(name)) throw new TypeError(`Invalid parameter name "${name}" in ${path}`);
      if (paramNames.includes(name)) throw new TypeError(`Duplicate parameter "${name}" in ${path}`);
      paramNames.push(name);
    } else {
      if (seg.includes(':') || seg.includes('*')) throw new TypeError(`Invalid segment "${seg}" in ${path}`);
    }
  });
  return { path, paramNames, wildcardAt };
}

/** `/api` + `/users` → `/api/users`; `/api` + `/` → `/api`. */
export function joinPaths(prefix: string, path: string): string {
  if (prefix === '' || prefix === '/') return path;
  if (path === '/' || path === '') return prefix;
  return prefix.replace(/\/+$/, '') + path;
}

export function normalizePrefix(prefix: string): string {
  if (typeof prefix !== 'string' || !prefix.startsWith('/')) throw new TypeError(`Prefix must start with "/": ${JSON.stringify(prefix)}`);
  if (prefix.includes(':') || prefix.includes('*')) throw new TypeError(`Prefixes are literal paths (no :params or *): ${prefix}`);
  const trimmed = prefix.replace(/\/+$/, '');
  return trimmed === '' ? '/' : trimmed;
}

/**
 * Does middleware scoped to `prefix` apply to routes with this pattern? Decided at startup:
 * 'always', 'never', or 'runtime' when a :param or * overlaps the prefix.
 */
export function prefixApplies(prefix: string, pattern: Pattern): 'always' | 'never' | 'runtime' {
  if (prefix === '/') return 'always';
  const want = prefix.slice(1).split('/');
  const have = pattern.path === '/' ? [] : pattern.path.slice(1).split('/');
  for (let i = 0; i < want.length; i++) {
    const seg = have[i];
    if (seg === undefined) return 'never';
    if (seg === '*' || seg.startsWith(':')) return 'runtime';
    if (seg !== want[i]) return 'never';
  }
  return 'always';
}

export function pathInPrefix(path: string, prefix: string): boolean {
  return path === prefix || (path.startsWith(prefix) && path.charCodeAt(prefix.length) === 47);
}

type Simplify<T> = { [K in keyof T]: T[K] } & {};
type ParamsOf<P extends string> = P extends `${infer Head}/${infer Tail}`
  ? ParamsOf<Head> & ParamsOf<Tail>
  : P extends `:${infer Name}`
    ? { [K in Name]: string }
    : P extends '*'
      ? { '*': string }
      : {};

/** `'/users/:id/files/*'` → `{ id: string; '*': string }`. */
export type PathParams<P extends string> = string extends P ? Record<string, string> : Simplify<ParamsOf<P>>;
