/**
 * Issue 23: `rxmcp/web` and the server it serves run where `node:` does not exist (Deno without
 * its Node layer, Cloudflare Workers without `nodejs_compat`, a browser). Every module the web
 * entry and `rxmcp/server` reach, type-only imports included, imports no Node built-in and no
 * Node-only package; the node:http adapter is the check's counter-example.
 */
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { cruise } from 'dependency-cruiser'
import { describe, expect, it } from 'vitest'

const root = fileURLToPath(new URL('../..', import.meta.url))
/** Packages that exist only on Node (beside `node:*` built-ins). */
const NODE_ONLY_PACKAGES = new Set(['ws'])

/** Each project module `entries` reach (any import kind) that imports a Node built-in or Node-only package, with what it imports. */
async function nodeImportsReachedFrom(entries: string[]): Promise<string[]> {
  const result = await cruise(entries, {
    tsPreCompilationDeps: true, tsConfig: { fileName: join(root, 'tsconfig.json') }, doNotFollow: { path: 'node_modules' },
    enhancedResolveOptions: { extensions: ['.ts', '.js'] }, baseDir: root,
  } as never)
  const output = result.output as { modules: { source: string; dependencies: { module: string; coreModule: boolean; dependencyTypes: string[] }[] }[] }
  const found: string[] = []
  for (const module of output.modules) {
    if (module.source.startsWith('node_modules/')) continue
    for (const dependency of module.dependencies) {
      if (dependency.coreModule || dependency.dependencyTypes.includes('core') || NODE_ONLY_PACKAGES.has(dependency.module)) found.push(`${module.source} -> ${dependency.module}`)
    }
  }
  return found.sort()
}

describe('rxmcp/web', () => {
  it('reaches no Node built-in from the web entry or rxmcp/server, type-only imports included', async () => {
    expect(await nodeImportsReachedFrom(['entries/web.ts', 'actors/server.ts'])).toEqual([])
  }, 120_000)

  it('the node:http adapter does reach node:http, reported as `http` (the check sees Node imports)', async () => {
    expect(await nodeImportsReachedFrom(['transports/streamable-http.ts'])).toEqual(expect.arrayContaining(['transports/node-exchange.ts -> http', 'transports/listen.ts -> http']))
  }, 120_000)
})
