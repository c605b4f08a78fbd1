import { readFile } from 'node:fs/promises'
import { join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import ts from 'typescript'
import { cruise } from 'dependency-cruiser'
import { beforeAll, describe, expect, it } from 'vitest'

const root = fileURLToPath(new URL('../..', import.meta.url))
/** Packages that exist only on Node (beside `node:*` built-ins). */
const NODE_ONLY_PACKAGES = new Set(['ws'])
const MAX_ROOT_EXPORTS = 120

interface Exported { name: string; module: string; documented: boolean }

/** The names an entry file exports, each with the file that declares it and whether it has a doc comment. */
function exportsOf(program: ts.Program, file: string): Exported[] {
  const checker = program.getTypeChecker()
  const source = program.getSourceFile(join(root, file))
  if (source === undefined) throw new Error(`${file} is not in the program`)
  const moduleSymbol = checker.getSymbolAtLocation(source)!
  return checker.getExportsOfModule(moduleSymbol).map(symbol => {
    const target = symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol
    const declaration = target.declarations?.[0]
    const documented = target.getDocumentationComment(checker).length > 0 || (declaration !== undefined && ts.getJSDocTags(declaration).length > 0)
    return { name: symbol.name, module: declaration === undefined ? '?' : relative(root, declaration.getSourceFile().fileName), documented }
  })
}

/** Source files whose runtime imports (static or dynamic, not type-only) reach a Node built-in or a Node-only package. */
async function nodeOnlyModules(entries: string[]): Promise<Set<string>> {
  const result = await cruise(entries, {
    tsPreCompilationDeps: true, tsConfig: { fileName: join(root, 'tsconfig.json') }, doNotFollow: { path: 'node_modules' },
    enhancedResolveOptions: { extensions: ['.ts', '.js'] }, baseDir: root,
  } as never)
  const output = result.output as { modules: { source: string; dependencies: { resolved: string; module: string; dynamic: boolean; coreModule: boolean; dependencyTypes: string[] }[] }[] }
  // A module is Node-only when one of its runtime imports (static, or dynamic with a literal
  // specifier: what it loads when used) is a built-in, a Node-only package, or a
  // Node-only module: start from the direct ones and spread to importers until nothing changes.
  const runtime = (types: string[], _dynamic: boolean) => !types.includes('type-only') && !types.includes('type-import')
  const nodeOnly = new Set<string>()
  for (const module of output.modules) {
    if (module.dependencies.some(dependency => runtime(dependency.dependencyTypes, dependency.dynamic)
      && (dependency.coreModule || dependency.dependencyTypes.includes('core') || NODE_ONLY_PACKAGES.has(dependency.module)))) nodeOnly.add(module.source)
  }
  for (let isGrowing = true; isGrowing;) {
    isGrowing = false
    for (const module of output.modules) {
      if (nodeOnly.has(module.source)) continue
      if (module.dependencies.some(dependency => runtime(dependency.dependencyTypes, dependency.dynamic) && nodeOnly.has(dependency.resolved))) {
        nodeOnly.add(module.source)
        isGrowing = true
      }
    }
  }
  return nodeOnly
}

describe('issue 21: the public surface', () => {
  let program: ts.Program
  let manifest: { exports: Record<string, { default?: string }> }
  /** Source entry file of each package subpath (`rxmcp/tasks` -> entries/tasks.ts). */
  let subpaths: Map<string, string>

  beforeAll(async () => {
    manifest = JSON.parse(await readFile(join(root, 'package.json'), 'utf8'))
    subpaths = new Map(Object.entries(manifest.exports).filter(([, target]) => target.default !== undefined)
      .map(([subpath, target]) => [subpath.replace(/^\./, 'rxmcp'), target.default!.replace(/^\.\/dist\//, '').replace(/\.js$/, '.ts')]))
    const options: ts.CompilerOptions = { module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext, allowImportingTsExtensions: true, noEmit: true, strict: true, skipLibCheck: true, types: ['node'], lib: ['lib.es2023.d.ts', 'lib.dom.d.ts'] }
    program = ts.createProgram([...new Set(subpaths.values())].map(file => join(root, file)), options)
  }, 120_000)

  it(`the root entry exports at most ${MAX_ROOT_EXPORTS} names, each documented`, () => {
    const exported = exportsOf(program, 'index.ts')
    expect(exported.length).toBeGreaterThan(50)
    expect(exported.length).toBeLessThanOrEqual(MAX_ROOT_EXPORTS)
    expect(exported.filter(entry => !entry.documented).map(entry => `${entry.name} (${entry.module})`)).toEqual([])
  })

  it('rxmcp/browser is exactly the root names whose modules import nothing Node-only', async () => {
    const nodeOnly = await nodeOnlyModules(['index.ts', 'browser.ts'])
    // The rule can fail: the Node listeners are Node-only and the client is not.
    expect(nodeOnly.has('transports/stdio.ts')).toBe(true)
    expect(nodeOnly.has('transports/websocket.ts')).toBe(true)
    expect(nodeOnly.has('actors/client.ts')).toBe(false)
    const rootExports = exportsOf(program, 'index.ts')
    const expected = rootExports.filter(entry => !nodeOnly.has(entry.module)).map(entry => entry.name).sort()
    const browser = exportsOf(program, 'browser.ts').map(entry => entry.name).sort()
    expect(browser).toEqual(expected)
    expect(expected).toContain('ForbiddenError')
    expect(expected).not.toContain('stdio')
  }, 120_000)

  it('every name CHANGELOG.md says moved is exported by the subpath it names, and no longer by the root', async () => {
    const changelog = await readFile(join(root, 'CHANGELOG.md'), 'utf8')
    const rows = [...changelog.matchAll(/^\| `(rxmcp\/[a-z/-]+)` \| (.+) \|$/gm)]
    expect(rows.length).toBeGreaterThan(5)
    const rootNames = new Set(exportsOf(program, 'index.ts').map(entry => entry.name))
    let moved = 0
    for (const [, subpath, list] of rows) {
      const file = subpaths.get(subpath!)
      expect(file, `${subpath} is a package subpath`).toBeDefined()
      const names = new Set(exportsOf(program, file!).map(entry => entry.name))
      for (const [, name] of list!.matchAll(/`([A-Za-z_$][\w$]*)`/g)) {
        expect(names.has(name!), `${name} from ${subpath}`).toBe(true)
        expect(rootNames.has(name!), `${name} left the root`).toBe(false)
        moved++
      }
    }
    expect(moved).toBeGreaterThan(200)
  })

  it('every subpath documents every name it exports (what the API reference is generated from)', () => {
    const undocumented = new Set<string>()
    for (const file of new Set(subpaths.values())) {
      for (const entry of exportsOf(program, file)) if (!entry.documented) undocumented.add(`${entry.name} (${entry.module})`)
    }
    expect([...undocumented].sort()).toEqual([])
  })
})
