// Mistakes in the route table that would otherwise fail silently, refused when the app
// starts (the full paths are known only once routers are flattened): two routes that claim
// the same method and path (uWS would run only one of them), and a `params` schema that
// names a key the path does not have (it could never be present).
import type { FlatRoute } from './route-table.ts';

/** Throws a TypeError naming the route for the first problem found. */
export function checkRouteTable(routes: readonly FlatRoute[], trailingSlash: 'ignore' | 'strict' | 'redirect'): void {
  const seen = new Map<string, string>();
  for (const r of routes) {
    const method = r.record.method ?? 'ANY';
    for (const variant of slashVariants(r.pattern.path, trailingSlash)) {
      // uWS matches parameters by position: /users/:id and /users/:uid are the same route.
      const key = `${method} ${unnamed(variant)}`;
      const earlier = seen.get(key);
      if (earlier !== undefined) {
        const bySlash = unnamed(earlier) !== unnamed(r.pattern.path);
        throw new TypeError(
          `Route ${method} ${r.pattern.path} is declared twice (first as ${method} ${earlier}${bySlash ? `; with trailingSlash '${trailingSlash}' they match the same URLs` : ''}): only one could ever run`,
        );
      }
      seen.set(key, r.pattern.path);
    }
    const keys = schemaKeys(r.record.options.params);
    if (keys !== undefined) {
      const have = new Set(r.pattern.paramNames);
      if (r.pattern.wildcardAt !== -1) have.add('*');
      for (const k of keys) {
        if (!have.has(k)) {
          const names = [...have].map((n) => (n === '*' ? '*' : `:${n}`)).join(', ') || 'none';
          throw new TypeError(
            `Route ${method} ${r.pattern.path}: the params schema has a key "${k}" that the path does not declare (path params: ${names})`,
          );
        }
      }
    }
  }
}

/** The path with parameter names erased: what uWS actually matches on. */
const unnamed = (path: string) => path.replace(/\/:[^/]+/g, '/:');

function slashVariants(path: string, policy: 'ignore' | 'strict' | 'redirect'): string[] {
  if (policy === 'strict' || path === '/' || path.endsWith('*')) return [path];
  return [path.endsWith('/') ? path.slice(0, -1) : path];
}

/** The keys of an object schema, for the validators that expose them (Zod: shape, Valibot: entries); else undefined. */
function schemaKeys(schema: unknown): string[] | undefined {
  if (typeof schema !== 'object' || schema === null) return undefined;
  const s = schema as { shape?: unknown; entries?: unknown; type?: unknown };
  let shape: unknown;
  try {
    shape = s.shape ?? (s.type === 'object' || s.type === 'strict_object' || s.type === 'loose_object' ? s.entries : undefined);
  } catch {
    return undefined; // a getter that throws: not an object schema we can read
  }
  return typeof shape === 'object' && shape !== null ? Object.keys(shape) : undefined;
}
