// A Standard Schema validator as JSON Schema, converted by its vendor: Standard JSON Schema
// (`~standard.jsonSchema`: Zod ≥ 4.2, ArkType), Zod's own `toJSONSchema`, valibot through
// `@valibot/to-json-schema`. Used by the compiled serializer (serializer.ts) and by
// @tachyon/openapi, so that both describe a schema the same way.
import { createRequire } from 'node:module';
import type { Schema } from './validation.ts';

export type JsonSchema = Record<string, unknown>;
/** The schema's input (what it accepts) or output (what its parse returns). */
export type JsonSchemaIo = 'input' | 'output';
/** OpenAPI 3.1 takes 2020-12; AsyncAPI 3 and fast-json-stringify take draft-07. */
export type JsonSchemaTarget = 'draft-2020-12' | 'draft-07';

// Optional peers, loaded synchronously on first use (Node ≥ 22.12 can require ES modules).
const load = createRequire(import.meta.url);
const loaded = new Map<string, unknown>();

/** An optional peer dependency, or undefined when it is not installed. */
export function optionalPeer<T>(name: string): T | undefined {
  if (!loaded.has(name)) {
    try {
      loaded.set(name, load(name));
    } catch {
      loaded.set(name, undefined);
    }
  }
  return loaded.get(name) as T | undefined;
}

interface StandardJsonSchema {
  input?: (options: { target: string }) => JsonSchema;
  output?: (options: { target: string }) => JsonSchema;
}

/** The vendor's JSON Schema for `schema`, or an Error saying why there is none. Never throws. */
export function toJsonSchema(schema: Schema, io: JsonSchemaIo, target: JsonSchemaTarget): JsonSchema | Error {
  const std = (schema as unknown as { '~standard': { vendor: string; jsonSchema?: StandardJsonSchema } })['~standard'];
  try {
    const convert = std.jsonSchema?.[io];
    if (typeof convert === 'function') return convert({ target });
    if (std.vendor === 'zod') {
      const zod = optionalPeer<{ toJSONSchema?: (s: unknown, o: object) => JsonSchema }>('zod');
      if (typeof zod?.toJSONSchema === 'function')
        return zod.toJSONSchema(schema, { target: target === 'draft-07' ? 'draft-7' : target, io });
    }
    if (std.vendor === 'valibot') {
      const valibot = optionalPeer<{ toJsonSchema: (s: unknown) => JsonSchema }>('@valibot/to-json-schema');
      if (valibot === undefined) return new Error('valibot schemas need @valibot/to-json-schema installed (npm i @valibot/to-json-schema)');
      return valibot.toJsonSchema(schema);
    }
    return new Error(`its vendor (${std.vendor}) offers no JSON Schema conversion (~standard.jsonSchema)`);
  } catch (err) {
    return err instanceof Error ? err : new Error(String(err));
  }
}
