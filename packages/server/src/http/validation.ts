import type { StandardSchemaV1 } from '@standard-schema/spec';
import { ValidationError, type ValidationIssue, type ValidationTarget } from './errors.ts';
import { compiledSchema } from './schema-compile.ts';

export type Schema<Output = unknown> = StandardSchemaV1<unknown, Output>;
export type Infer<S> = S extends StandardSchemaV1 ? StandardSchemaV1.InferOutput<S> : never;

/** Zod 4 exposes safeParse; we call it so the ZodError itself becomes the `cause`. */
interface ZodLike {
  safeParse(value: unknown): { success: true; data: unknown } | { success: false; error: { issues: ZodIssueLike[] } };
  safeParseAsync(value: unknown): Promise<{ success: true; data: unknown } | { success: false; error: { issues: ZodIssueLike[] } }>;
}
interface ZodIssueLike {
  path: PropertyKey[];
  message: string;
}

export type Validator = (value: unknown) => unknown; // returns the output, a Promise of it, or throws ValidationError

/**
 * Compiles a schema into a validator once, when the route is compiled. `compile`: use Zod's
 * generated parser for a Zod schema (the `compileSchemas` option; schema-compile.ts).
 */
export function compileValidator(target: ValidationTarget, schema: Schema, compile: boolean): Validator {
  const source = asZod(schema);
  if (source) {
    const zod = compile ? compiledSchema(source) : source;
    return (value) => {
      let result;
      try {
        result = zod.safeParse(value);
      } catch (err) {
        // Zod refuses async refinements in safeParse; fall back to the async path.
        if (err instanceof Error && /async|Promise/i.test(err.message)) {
          return zod.safeParseAsync(value).then((r) => {
            if (r.success) return r.data;
            throw new ValidationError(target, mapIssues(r.error.issues), r.error);
          });
        }
        throw err;
      }
      if (result.success) return result.data;
      throw new ValidationError(target, mapIssues(result.error.issues), result.error);
    };
  }
  const standard = schema['~standard'];
  const settle = (result: StandardSchemaV1.Result<unknown>) => {
    if (result.issues === undefined) return result.value;
    throw new ValidationError(target, mapIssues(result.issues), result.issues);
  };
  return (value) => {
    const result = standard.validate(value);
    return result instanceof Promise ? result.then(settle) : settle(result);
  };
}

function asZod(schema: Schema): ZodLike | undefined {
  const s = schema as unknown as Partial<ZodLike> & { '~standard': { vendor: string } };
  return s['~standard'].vendor === 'zod' && typeof s.safeParse === 'function' && typeof s.safeParseAsync === 'function'
    ? (s as ZodLike)
    : undefined;
}

function mapIssues(
  issues: ReadonlyArray<{ message: string; path?: ReadonlyArray<PropertyKey | StandardSchemaV1.PathSegment> | undefined }>,
): ValidationIssue[] {
  return issues.map((issue) => ({
    path: (issue.path ?? []).map((seg) => {
      const key = typeof seg === 'object' && seg !== null ? seg.key : seg;
      return typeof key === 'number' ? key : String(key);
    }),
    message: issue.message,
  }));
}

export function isSchema(value: unknown): value is Schema {
  return typeof value === 'object' && value !== null && '~standard' in value;
}
