// Standard Schema validators to JSON Schema (2020-12, what OpenAPI 3.1 and AsyncAPI 3 take),
// with named sub-schemas hoisted into one shared components map. The vendor converts:
// the server's toJsonSchema (Standard JSON Schema, Zod's own `toJSONSchema`, valibot through
// `@valibot/to-json-schema`); a schema nobody can convert is
// documented as permissive and reported through `warn`, naming where it was used.
import { toJsonSchema, type JsonSchema, type JsonSchemaIo, type JsonSchemaTarget, type Schema } from '@tachyon/server';

export type { JsonSchema };
export type Io = JsonSchemaIo;
export type Target = JsonSchemaTarget;

const COMPONENT_NAME = /[^A-Za-z0-9._-]/g;

/** What a schema of "no value" (`z.undefined()`: an event without data) documents: nothing is valid, so the value is absent. */
const noValue = (): JsonSchema => ({ not: {}, description: 'No value: absent.' });

export function isNoValue(schema: JsonSchema): boolean {
  const not = schema.not;
  return typeof not === 'object' && not !== null && Object.keys(not).length === 0;
}

/**
 * JSON Schema has no `undefined`, so vendors refuse to convert a schema that accepts only it.
 * Asked through the validator itself (synchronous answers only): undefined passes, null and {} fail.
 */
function acceptsOnlyUndefined(schema: Schema): boolean {
  const validate = (schema as { '~standard': { validate: (v: unknown) => unknown } })['~standard'].validate;
  const passes = (value: unknown) => {
    try {
      const r = validate(value) as { issues?: unknown } | Promise<unknown>;
      return r instanceof Promise ? undefined : r.issues === undefined;
    } catch {
      return undefined;
    }
  };
  return passes(undefined) === true && passes(null) === false && passes({}) === false;
}

/**
 * Converts schemas for one document. Named sub-schemas (Zod `.meta({ id })`, `$defs`) land
 * in `components` once and are referenced as `#/components/schemas/<name>`; a name already
 * taken by a different schema gets a suffix, so two vendors' `User` never overwrite each other.
 */
export class SchemaConverter {
  readonly components: Record<string, JsonSchema> = {};
  private readonly cache = new Map<Schema, Map<Io, JsonSchema>>();
  private readonly refBase = '#/components/schemas/';
  private readonly warn: (message: string) => void;
  private readonly target: Target;

  constructor(warn: (message: string) => void, target: Target = 'draft-2020-12') {
    this.warn = warn;
    this.target = target;
  }

  /** The JSON Schema of `schema` as used `where` (a route and a target, for the warning). */
  convert(schema: Schema, io: Io, where: string): JsonSchema {
    let byIo = this.cache.get(schema);
    if (byIo === undefined) this.cache.set(schema, (byIo = new Map()));
    const hit = byIo.get(io);
    if (hit !== undefined) return hit;
    const raw = toJsonSchema(schema, io, this.target);
    let out: JsonSchema;
    if (raw instanceof Error && acceptsOnlyUndefined(schema)) out = noValue();
    else if (raw instanceof Error) {
      this.warn(`${where}: schema cannot be converted to JSON Schema (${raw.message}); documented as any value`);
      out = { description: 'Not documented: this schema has no JSON Schema form.' };
    } else out = this.hoist(raw, where, io);
    byIo.set(io, out);
    return out;
  }

  /** A shared component by name (the framework's error bodies); returns its $ref. */
  define(name: string, schema: JsonSchema): JsonSchema {
    return { $ref: this.refBase + this.place(name, schema) };
  }

  /** The schema a `$ref` into the components points at, or the schema itself. */
  resolve(schema: JsonSchema): JsonSchema {
    const ref = schema.$ref;
    if (typeof ref === 'string' && ref.startsWith(this.refBase)) return this.components[ref.slice(this.refBase.length)] ?? schema;
    return schema;
  }

  /**
   * Puts `schema` under `name`, or under the name it already has. A schema read both ways
   * differs (Zod's output forms close objects): the second form gets `Input`/`Output` added.
   */
  private place(name: string, schema: JsonSchema, io?: Io): string {
    const base = name.replace(COMPONENT_NAME, '_') || 'Schema';
    const text = JSON.stringify(schema);
    const alternative = io === undefined ? undefined : base + (io === 'input' ? 'Input' : 'Output');
    for (let i = 0; ; i++) {
      const candidate = i === 0 ? base : i === 1 && alternative !== undefined ? alternative : `${alternative ?? base}${i}`;
      const existing = this.components[candidate];
      if (existing === undefined) {
        this.components[candidate] = schema;
        return candidate;
      }
      if (JSON.stringify(existing) === text) return candidate;
    }
  }

  /** Moves `$defs`/`definitions` into the components and rewrites the references to them. */
  private hoist(raw: JsonSchema, where: string, io: Io): JsonSchema {
    const { $schema: _, $defs, definitions, ...root } = raw;
    const defs = { ...(definitions as Record<string, JsonSchema> | undefined), ...($defs as Record<string, JsonSchema> | undefined) };
    const names = new Map<string, string>();
    // A recursive schema without a name refers to its own root ("#"): it becomes a component too.
    const selfRef = JSON.stringify(root).includes('"$ref":"#"');
    const rootName = selfRef ? where.replace(/[^A-Za-z0-9]+/g, '_').replace(/^_|_$/g, '') : undefined;
    // Names first (definitions may refer to each other), then the rewritten bodies.
    for (const name of Object.keys(defs)) names.set(name, name.replace(COMPONENT_NAME, '_'));
    const rewrite = (node: unknown): unknown => {
      if (Array.isArray(node)) return node.map(rewrite);
      if (node === null || typeof node !== 'object') return node;
      const out: JsonSchema = {};
      for (const [k, v] of Object.entries(node)) {
        if (k === '$ref' && typeof v === 'string') out[k] = this.refTo(v, names, rootName);
        else out[k] = rewrite(v);
      }
      return out;
    };
    // Placing may rename (a clash): place, then rewrite again with the final names.
    for (const [name, def] of Object.entries(defs)) names.set(name, this.place(names.get(name)!, rewrite(def) as JsonSchema, io));
    for (const [name, def] of Object.entries(defs)) this.components[names.get(name)!] = rewrite(def) as JsonSchema;
    const body = rewrite(root) as JsonSchema;
    if (rootName === undefined) return body;
    return { $ref: this.refBase + this.place(rootName, body, io) };
  }

  private refTo(ref: string, names: Map<string, string>, rootName: string | undefined): string {
    if (ref === '#' && rootName !== undefined) return this.refBase + rootName;
    const m = /^#\/(?:\$defs|definitions)\/(.+)$/.exec(ref);
    if (m === null) return ref;
    const name = names.get(decodeURIComponent(m[1]!));
    return name === undefined ? ref : this.refBase + name;
  }
}
