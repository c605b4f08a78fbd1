/**
 * The JavaScript of the package: one file per entry point of package.json's `exports` and `bin`,
 * at the path the map names (dist/index.js, dist/actors/server.js, ...), and the code they share in
 * a few chunks under dist/chunks/. Run by `npm run build` after `tsc -p tsconfig.build.json`, which
 * writes the declarations.
 *
 * Why bundle (issue 24): a stdio server is spawned by hosts over and over, and what it costs to
 * start is mostly how many modules Node resolves, reads and compiles before `initialize` is
 * answered, not how much code runs. Per file (tsc's output) a server on `rxmcp/server` +
 * `rxmcp/transports/stdio` loaded 78 of our modules and 88 of RxJS (CommonJS, each imported from
 * ESM through Node's CommonJS translator); bundled it loads 4.
 *
 * - **Chunks by use, not by every combination.** Default code splitting over 30 entry points
 *   makes a chunk per set of entries that share a piece of code (the root alone loaded 45). Here
 *   two groups collect the code: `core`, every module a stdio server on the subpaths reaches, and
 *   `root`, the rest of what `import … from 'rxmcp'` reaches. Each entry file is then a line of
 *   re-exports. What no group takes (the rest of host/, auth/, the CLI, lazily imported modules)
 *   is split by the bundler as usual.
 * - **Groups hold nothing Node-only.** A module that reaches a Node built-in or `ws` through any
 *   import, dynamic ones included (stdio's spawn, the node:http listener), is left out of both
 *   groups, so the browser and web entries, which load the groups, reach nothing from `node:`
 *   (the package test checks the built files).
 * - **One copy of every module.** All entries are built in one pass, so a class or a registry
 *   exists once however many subpaths an application imports (`instanceof McpError` holds across
 *   `rxmcp` and `rxmcp/errors`).
 * - **RxJS is bundled** from its ES module build, the parts used only. Importing it from the
 *   installed package costs more than the rest of a server's start together (88 CommonJS modules;
 *   see the issue 24 note for the figures). RxJS interoperates across copies (Observables are
 *   recognised by shape and `Symbol.observable`, schedulers by interface); what does not carry
 *   over is `instanceof` against the application's RxJS classes and its global `config`.
 * - **Dependencies stay external** (package.json `dependencies` and `peerDependencies`, RxJS
 *   excepted, and Node's built-ins), loaded where the sources load them (most lazily).
 * - **Readable**: not minified (names, lines and indentation stay, so a stack trace reads as the
 *   sources do; minifying fully made the files 35% smaller and compiled no faster), JSDoc dropped;
 *   source maps (sources inlined) are written beside each file.
 */
import { chmodSync, readFileSync, realpathSync } from 'node:fs'
import { builtinModules, createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { rolldown, type Plugin } from 'rolldown'

const root = fileURLToPath(new URL('..', import.meta.url))
const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
  exports: Record<string, string | Record<string, string>>; bin: Record<string, string>
  dependencies: Record<string, string>; peerDependencies: Record<string, string>
}

/** Whether RxJS goes into the chunks (true) or stays an import of the installed `rxjs` (false). */
const BUNDLE_RXJS = true
/** The entries whose reach makes the `core` group: a stdio server on the subpaths. */
const CORE_ENTRIES = ['actors/server.ts', 'transports/stdio.ts']
/** The entry whose further reach makes the `root` group. */
const ROOT_ENTRY = 'index.ts'

/** Every JavaScript file package.json points at, as `dist/<name>.js` -> `<name>.ts`. */
function entryPoints(): Record<string, string> {
  const targets = new Set(Object.values(manifest.bin))
  for (const target of Object.values(manifest.exports)) {
    for (const [condition, file] of Object.entries(typeof target === 'string' ? { default: target } : target)) {
      if (condition !== 'types' && file.endsWith('.js')) targets.add(file)
    }
  }
  return Object.fromEntries([...targets].map(file => {
    const name = file.replace(/^\.\/dist\//, '').replace(/\.js$/, '')
    return [name, join(root, `${name}.ts`)]
  }))
}

const externalPackages = [...Object.keys(manifest.dependencies), ...Object.keys(manifest.peerDependencies)]
  .filter(name => !(BUNDLE_RXJS && name === 'rxjs'))
const builtins = new Set(builtinModules)

/** Node built-ins and the package's dependencies, which the bundle imports rather than holds. */
function isExternal(id: string): boolean {
  if (id.startsWith('node:') || builtins.has(id)) return true
  return externalPackages.some(name => id === name || id.startsWith(`${name}/`))
}

/**
 * RxJS from its ES module build (`rxjs/internal/<path>` -> `dist/esm/internal/<path>.js`): under
 * the `node` condition its exports map gives the CommonJS build, which a bundler can only wrap
 * whole.
 */
function rxjsModules(): Plugin {
  const esm = join(realpathSync(dirname(createRequire(join(root, 'package.json')).resolve('rxjs/package.json'))), 'dist', 'esm')
  return {
    name: 'rxjs-esm',
    resolveId(source) {
      if (source === 'rxjs') return join(esm, 'index.js')
      if (source.startsWith('rxjs/internal/')) return join(esm, `${source.slice('rxjs/'.length)}.js`)
      if (source.startsWith('rxjs/')) throw new Error(`scripts/bundle.ts: no ES module path known for ${source}`)
      return null
    },
  }
}

/** Packages that exist only on Node (beside its built-ins), as spec/layout/web-entry.spec.ts counts them. */
const NODE_ONLY_PACKAGES = new Set(['ws'])

interface Graph {
  /** Each module's static imports. */
  imports: Map<string, string[]>
  /** Each module's static and dynamic imports. */
  anyImports: Map<string, string[]>
  /** The modules that import a Node built-in or a Node-only package, statically or not. */
  nodeOnly: Set<string>
}

/** The module graph, read when the bundler has built it. */
function graphReader(graph: Graph): Plugin {
  const isNodeOnly = (id: string) => id.startsWith('node:') || builtins.has(id) || NODE_ONLY_PACKAGES.has(id)
  return {
    name: 'graph-reader',
    buildEnd() {
      for (const id of this.getModuleIds()) {
        const info = this.getModuleInfo(id)
        if (info === null || isExternal(id)) continue
        graph.imports.set(id, [...info.importedIds])
        graph.anyImports.set(id, [...info.importedIds, ...info.dynamicallyImportedIds])
        if ([...info.importedIds, ...info.dynamicallyImportedIds].some(isNodeOnly)) graph.nodeOnly.add(id)
      }
    },
  }
}

/** Every module `entries` reach through `imports`. */
function reach(imports: Map<string, string[]>, entries: string[]): Set<string> {
  const reached = new Set<string>()
  const pending = [...entries]
  while (pending.length > 0) {
    const id = pending.pop()!
    if (reached.has(id) || !imports.has(id)) continue
    reached.add(id)
    pending.push(...imports.get(id)!)
  }
  return reached
}

/** The modules that reach something Node-only through any import (themselves included). */
function reachingNode(graph: Graph): Set<string> {
  const reaching = new Set<string>()
  for (const id of graph.anyImports.keys()) {
    if ([...reach(graph.anyImports, [id])].some(reached => graph.nodeOnly.has(reached))) reaching.add(id)
  }
  return reaching
}

/** The two groups, from the graph: what the core entries reach, then what the root adds; no Node-bound module in either. */
function groupsOf(graph: Graph): { core: Set<string>; rootOnly: Set<string> } {
  const nodeBound = reachingNode(graph)
  const core = new Set([...reach(graph.imports, CORE_ENTRIES.map(entry => join(root, entry)))].filter(id => !nodeBound.has(id)))
  const rootOnly = new Set([...reach(graph.imports, [join(root, ROOT_ENTRY)])].filter(id => !nodeBound.has(id) && !core.has(id)))
  return { core, rootOnly }
}

export async function bundle(outDir = join(root, 'dist')): Promise<void> {
  const graph: Graph = { imports: new Map(), anyImports: new Map(), nodeOnly: new Set() }
  // The bundler reads the modules when it writes; the groups are computed at the first question.
  let groups: { core: Set<string>; rootOnly: Set<string> } | undefined
  const build = await rolldown({
    input: entryPoints(),
    cwd: root,
    platform: 'node',
    external: isExternal,
    // Entries export exactly what their sources export, nothing a chunk happens to need.
    preserveEntrySignatures: 'strict',
    plugins: [...(BUNDLE_RXJS ? [rxjsModules()] : []), graphReader(graph)],
  })
  try {
    await build.write({
      dir: outDir,
      format: 'es',
      entryFileNames: '[name].js',
      chunkFileNames: 'chunks/[name]-[hash].js',
      sourcemap: true,
      // Annotations stay (`@vite-ignore` keeps a bundler of the application off a computed import).
      comments: { legal: true, annotation: true, jsdoc: false },
      codeSplitting: {
        groups: [
          { name: 'core', test: (id: string) => (groups ??= groupsOf(graph)).core.has(id), priority: 2 },
          { name: 'root', test: (id: string) => (groups ??= groupsOf(graph)).rootOnly.has(id), priority: 1 },
        ],
      },
    })
  } finally {
    await build.close()
  }
  if (groups === undefined || groups.core.size === 0) throw new Error('scripts/bundle.ts: the core group is empty')
  // The command runs from the repository too (`./dist/bin/rxmcp.js`), not only through npm's link.
  for (const file of Object.values(manifest.bin)) chmodSync(join(outDir, file.replace(/^\.\/dist\//, '')), 0o755)
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await bundle()
