// The folders of packages/server/src point one way (docs/architecture.md): a folder imports
// only from folders to its left in LAYERS, never from one to its right. That rule alone rules
// out cycles between folders (a cycle would need one import pointing right); no-circular rules
// out cycles between files, type-only imports included (tsPreCompilationDeps). Only uws/ may
// import uWebSockets.js: the rest of the code sees uWS through uws/'s types and loader.
// `npm run lint:deps` runs it; test/lint-deps.test.mjs proves the rules fire.
const LAYERS = ['uws', 'core', 'http', 'routing', 'serving', 'realtime', 'plugins', 'app', 'cluster'];
const SRC = '^packages/server/src/';

const direction = LAYERS.slice(0, -1).map((layer, i) => ({
  name: `${layer}-points-left`,
  comment: `${layer}/ may import only from ${LAYERS.slice(0, i).join(', ') || 'nothing in src/'}: ${LAYERS.slice(i + 1).join(', ')} lie to its right`,
  severity: 'error',
  from: { path: `${SRC}${layer}/` },
  to: { path: `${SRC}(${LAYERS.slice(i + 1).join('|')})/` },
}));

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    ...direction,
    {
      name: 'no-circular',
      comment: 'no cycle between files, type-only imports included',
      severity: 'error',
      from: { path: SRC },
      to: { circular: true },
    },
    {
      name: 'only-uws-loads-uws',
      comment: 'uWebSockets.js is imported by uws/ only',
      severity: 'error',
      from: { path: SRC, pathNot: `${SRC}uws/` },
      to: { path: '(^|/)uWebSockets\\.js($|/)' },
    },
    {
      name: 'src-is-self-contained',
      comment: 'src/ never imports tests, benchmarks or other workspaces by path',
      severity: 'error',
      from: { path: SRC },
      to: { path: '^(packages/server/test|packages/(client|sveltekit|redis|nats|openapi)|bench|examples)/' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '\\.test\\.ts$' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'packages/server/tsconfig.json' },
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default', 'types'] },
  },
};
