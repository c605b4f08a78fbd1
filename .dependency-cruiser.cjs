/**
 * The import rules of DESIGN.md's "Layout", checked by `npm run check:imports` (part of `npm test`):
 * lib/ knows the protocol, transports/ know I/O, actors/ know behaviour, auth/ knows OAuth; each
 * imports only itself and lib/. host/, bin/, the entry files, examples/ and spec/ sit above them.
 * No file-level cycle anywhere, type-only imports included.
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
