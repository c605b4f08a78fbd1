import { builtinModules } from 'node:module'
import { fileURLToPath } from 'node:url'
import { build, type Metafile } from 'esbuild'
import { describe, expect, it } from 'vitest'

const root = fileURLToPath(new URL('../../', import.meta.url))

/** Bundles one entry as a browser page would get it; esbuild throws on what it cannot resolve (a `node:*` import). */
async function bundleForBrowser(entry: string): Promise<{ metafile: Metafile; code: string }> {
  const result = await build({
    entryPoints: [entry], absWorkingDir: root, bundle: true, platform: 'browser', format: 'esm',
    write: false, metafile: true, logLevel: 'silent', outdir: 'out',
  })
  expect(result.errors).toEqual([])
  return { metafile: result.metafile, code: result.outputFiles.map(file => file.text).join('\n') }
}

/** The Node built-ins Node itself knows, with and without the `node:` prefix. */
const NODE_BUILTINS = new Set(builtinModules.flatMap(name => [name, `node:${name}`]))

describe('browser.ts', () => {
  it.each(['browser.ts', 'transports/http-client.ts', 'transports/websocket-client.ts', 'actors/client.ts', 'transports/streamable-http.ts'])('bundles %s for the browser with no Node built-in and no ws', async entry => {
    const { metafile, code } = await bundleForBrowser(entry)
    const inputs = Object.keys(metafile.inputs)
    expect(inputs).toContain(entry)
    expect(inputs.filter(input => input.startsWith('node:') || NODE_BUILTINS.has(input))).toEqual([])
    expect(inputs.filter(input => /node_modules\/ws\//.test(input))).toEqual([])
    // Nothing left for the page to load: no import esbuild kept outside the bundle.
    const external = Object.values(metafile.outputs).flatMap(output => output.imports).filter(imported => imported.external)
    expect(external).toEqual([])
    for (const input of Object.values(metafile.inputs)) {
      expect(input.imports.filter(imported => NODE_BUILTINS.has(imported.path))).toEqual([])
    }
    expect(code).not.toMatch(/\brequire\(\s*["'](node:)?(http|https|net|tls|crypto|child_process|fs|stream|ws)["']\s*\)/)
  })

  it('refuses a module that imports a Node built-in (the check above can fail)', async () => {
    await expect(bundleForBrowser('transports/stdio.ts')).rejects.toThrow(/node:child_process/)
  })
})
