// Zod schemas compiled once at startup (the `compileSchemas` option, docs/validation.md).
// Zod 4.6 and later generate a parser for a schema (`z.compile`): about 20 times faster than
// `safeParse` on the realistic POST's body (60 ns against 1.2 µs, bench/README.md), with the
// runtime parser behind it for every input the fast path does not accept, so the errors are
// Zod's own. Tachyon does not depend on Zod: it imports the copy that resolves from here, once,
// and compiles only schemas made by that same version.

interface ZodVersion {
  readonly major: number;
  readonly minor: number;
  readonly patch: number;
}

/** The part of the `zod` module this uses. */
interface ZodModule {
  compile(schema: unknown): unknown;
  core: { version: ZodVersion; globalConfig: { jitless?: boolean } };
}

let zod: ZodModule | null = null;
let loading: Promise<void> | null = null;

// A variable, not a literal: neither TypeScript nor a bundler should require Zod to be there.
const ZOD = 'zod';

/**
 * Imports Zod once per process. Nothing happens when it is not installed or has no `compile`
 * (before 4.6): schemas then run as they are.
 */
export function loadSchemaCompiler(): Promise<void> {
  loading ??= import(ZOD).then(
    (m: Partial<ZodModule>) => {
      if (typeof m.compile === 'function' && typeof m.core?.version?.major === 'number') zod = m as ZodModule;
    },
    () => undefined,
  );
  return loading;
}

/**
 * The compiled copy of a Zod schema, or the schema itself: when Zod was not loaded, the schema
 * comes from another Zod version (its generated code reads the internals of its own), Zod is
 * set `jitless` (no `new Function`, for CSP), or the compiler refuses it (async refinements,
 * cycles: `z.compile` hands those back unchanged). The caller's schema is never modified.
 */
export function compiledSchema<S extends object>(schema: S): S {
  const m = zod;
  if (m === null || m.core.globalConfig.jitless === true) return schema;
  const own = (schema as { _zod?: { version?: ZodVersion } })._zod?.version;
  const v = m.core.version;
  if (own === undefined || own.major !== v.major || own.minor !== v.minor || own.patch !== v.patch) return schema;
  try {
    return m.compile(schema) as S;
  } catch {
    return schema; // compile() does not throw for a schema it cannot model; this is only belt and braces
  }
}
