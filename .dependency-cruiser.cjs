/**
 * The import rules of DESIGN.md's "Layout", checked by `npm run check:imports` (part of `npm test`):
 * lib/ knows the protocol, transports/ know I/O, actors/ know behaviour, auth/ knows OAuth; each
 * imports only itself and lib/. host/, bin/, the entry files, examples/ and spec/ sit above them.
 * No file-level cycle anywhere, type-only imports included. Only lib/json-schema.ts imports ajv.
 */
const LAYERS = {
  lib: ['^lib/'],
  actors: ['^lib/', '^actors/'],
  transports: ['^lib/', '^transports/'],
  auth: ['^lib/', '^auth/'],
}

module.exports = {
  forbidden: [
    ...Object.entries(LAYERS).map(([layer, allowed]) => ({
      name: `${layer}-imports-only-${allowed.map(path => path.slice(1, -1)).join('-and-')}`,
      comment: `${layer}/ may import only ${allowed.map(path => path.slice(1)).join(' and ')} among the project's own files (DESIGN.md, Layout)`,
      severity: 'error',
      from: { path: `^${layer}/` },
      to: { path: '^(lib|actors|transports|auth|host|bin|examples|spec|vendor)/|^(index|browser|testing)\\.ts$', pathNot: allowed },
    })),
    {
      name: 'ajv-only-in-the-compiled-validator',
      comment: 'ajv generates code (new Function), which edge runtimes refuse: only lib/json-schema.ts imports it, and the runtime loads that module by dynamic import when the compiled validator is chosen, so a Worker bundle can leave ajv out',
      severity: 'error',
      from: { pathNot: '^lib/json-schema\\.ts$' },
      to: { path: '(^|/)node_modules/ajv/' },
    },
    {
      name: 'no-cycle',
      comment: 'no file-level import cycle, type-only imports included (contracts live in leaf files)',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^(node_modules|dist|\\.bench)/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { extensions: ['.ts', '.js'] },
  },
}
