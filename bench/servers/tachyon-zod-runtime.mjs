// Tachyon with `compileSchemas: false`: every schema runs through Zod's safeParse, as in the
// raw uWS peer and the others. Against `tachyon` (the default, z.compile) it prices the
// compiled parser; against `uws` it is the framework's own cost with the same validator.
process.env.TACHYON_COMPILE_SCHEMAS = '0';
await import('./tachyon.mjs');
