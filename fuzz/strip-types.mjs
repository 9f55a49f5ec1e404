// Registered with --import before Jazzer.js starts: hands Jazzer's instrumenting loader plain
// JavaScript for the repository's .ts sources (Node's own type stripping, positions kept), so
// that the TypeScript modules under test get coverage feedback like any .js module.
import { register } from 'node:module';

register('./strip-types-hook.mjs', import.meta.url);
