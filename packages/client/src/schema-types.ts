// What the typed clients read from a Standard Schema validator's type, structurally (no
// dependency on @standard-schema/spec or on the server): its input and output types.

/** A Standard Schema validator's input type (what the schema accepts); `unknown` for anything else. */
export type InputOf<S> = S extends { readonly '~standard': { readonly types?: { readonly input: infer I } | undefined } } ? I : unknown;

/** A Standard Schema validator's output type (what it produces); `unknown` for anything else. */
export type OutputOf<S> = S extends { readonly '~standard': { readonly types?: { readonly output: infer O } | undefined } } ? O : unknown;
