/**
 * The package as a consumer gets it: `npm pack`, installed into an empty project with no network
 * (dependencies linked from this checkout), then used with plain `node` (no TypeScript loader) and
 * type-checked with `tsc` under both module resolutions a consumer may use.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { execFile, spawn } from 'node:child_process'
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { gzipSync } from 'node:zlib'
import { get } from 'node:http'

const root = fileURLToPath(new URL('../..', import.meta.url))
const RUNTIME_DEPENDENCIES = ['ajv', 'rxjs', 'ws', 'yaml']
/** The optional peers, linked into the consumer project too, so that every subpath imports there. */
const OPTIONAL_PEERS = ['@cfworker/json-schema', '@opentelemetry/api', '@opentelemetry/sdk-node', 'jose', 'msgpackr', 'oauth4webapi', 'redis']

interface Run { code: number; stdout: string; stderr: string }

/** Runs a command to its end; the environment has no NODE_OPTIONS, so no loader sneaks in. */
function run(command: string, args: string[], cwd: string, timeout = 120_000): Promise<Run> {
  const env = { ...process.env }
  delete env.NODE_OPTIONS
  return new Promise(resolve => {
    execFile(command, args, { cwd, env, timeout, maxBuffer: 64 * 1024 * 1024 }, (error, stdout, stderr) => {
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr })
    })
  })
}

/** Runs an ES module given as text under plain node in the consumer project. */
function node(project: string, source: string, extra: string[] = []): Promise<Run> {
  return run(process.execPath, [...extra, '--input-type=module', '-e', source], project, 60_000)
}

describe('the npm package', () => {
  let scratch: string
  let project: string

  /**
   * A module hook that records every module a child resolves (the hook runs in its own thread and
   * appends to `<name>.log` in scratch), installed by `--import ./<name>-record.mjs` in the
   * project; `env` is this process's without NODE_OPTIONS (tsx's loader stays out of the child).
   */
  async function moduleRecorder(name: string): Promise<{ log: string; env: NodeJS.ProcessEnv }> {
    const log = join(scratch, `${name}.log`)
    await writeFile(join(project, `${name}-hooks.mjs`), [
      "import { appendFileSync } from 'node:fs'",
      'export async function resolve(specifier, context, next) {',
      '  const resolved = await next(specifier, context)',
      `  appendFileSync(${JSON.stringify(log)}, resolved.url + '\\n')`,
      '  return resolved',
      '}',
    ].join('\n'))
    await writeFile(join(project, `${name}-record.mjs`), `import { register } from 'node:module'\nregister('./${name}-hooks.mjs', import.meta.url)\n`)
    const env = { ...process.env }
    delete env.NODE_OPTIONS
    return { log, env }
  }
  let files: string[]
  let manifest: { dependencies?: Record<string, string>; peerDependencies?: Record<string, string>; peerDependenciesMeta?: Record<string, { optional?: boolean }>; exports: Record<string, unknown>; bin: Record<string, string> }

  beforeAll(async () => {
    scratch = await mkdtemp(join(tmpdir(), 'rxmcp-pack-'))
    // npm pack runs `prepare`, so the tarball holds a build of the sources as they are now.
    const packed = await run('npm', ['pack', '--json', '--pack-destination', scratch], root, 240_000)
    expect(packed.code, packed.stderr).toBe(0)
    const [report] = JSON.parse(packed.stdout.slice(packed.stdout.indexOf('['))) as [{ filename: string; files: { path: string }[] }]
    files = report.files.map(file => file.path).sort()
    manifest = JSON.parse(await readFile(join(root, 'package.json'), 'utf8'))

    project = join(scratch, 'consumer')
    await run('mkdir', ['-p', project], scratch)
    // Offline: the runtime dependencies are linked from this checkout, the package comes from the tarball.
    const dependencies = Object.fromEntries([...RUNTIME_DEPENDENCIES, ...OPTIONAL_PEERS].map(name => [name, `file:${join(root, 'node_modules', name)}`]))
    await writeFile(join(project, 'package.json'), JSON.stringify({ name: 'consumer', version: '1.0.0', type: 'module', dependencies }))
    const installed = await run('npm', ['install', '--offline', '--no-audit', '--no-fund', '--ignore-scripts', join(scratch, report.filename)], project, 240_000)
    expect(installed.code, installed.stderr).toBe(0)
    await writeFile(join(project, 'server.mjs'), [
      "import { createServer, stdio } from 'rxmcp'",
      "const server = createServer({ name: 'packaged', version: '1.0.0' })",
      "server.tool('echo', { inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] } },",
      "  ({ text }) => ({ content: [{ type: 'text', text: `echo: ${text}` }] }))",
      'await server.listen(stdio())',
    ].join('\n'))
  }, 600_000)

  afterAll(async () => {
    if (scratch !== undefined) await rm(scratch, { recursive: true, force: true })
  })

  it('holds the build, the README and the manifest, and nothing else', () => {
    const strays = files.filter(path => !/^(dist\/.+\.(js|d\.ts|js\.map)|package\.json|README\.md)$/.test(path))
    expect(strays).toEqual([])
    expect(files).toContain('dist/index.js')
    expect(files).toContain('dist/index.d.ts')
    expect(files).toContain('dist/bin/rxmcp.js')
    expect(files.filter(path => /(^|\/)(spec|\.ci|vendor|examples|bench)\//.test(path))).toEqual([])
  })

  it('depends at runtime on rxjs, ws, ajv and yaml only, with @cfworker/json-schema, @opentelemetry/api, @opentelemetry/sdk-node, msgpackr, jose, oauth4webapi and redis optional peers', () => {
    expect(Object.keys(manifest.dependencies ?? {}).sort()).toEqual(RUNTIME_DEPENDENCIES)
    expect(Object.keys(manifest.peerDependencies ?? {}).sort()).toEqual(OPTIONAL_PEERS)
    for (const peer of OPTIONAL_PEERS) expect(manifest.peerDependenciesMeta?.[peer]?.optional).toBe(true)
  })

  it('points every export at a built file that is in the tarball', () => {
    for (const [subpath, target] of Object.entries(manifest.exports)) {
      const targets = typeof target === 'string' ? [target] : Object.values(target as Record<string, string>)
      for (const file of targets) expect(files, `${subpath} -> ${file}`).toContain(file.replace(/^\.\//, ''))
    }
  })

  it('imports the root and every subpath with plain node', async () => {
    const subpaths = Object.keys(manifest.exports).filter(subpath => subpath !== './package.json').map(subpath => subpath.replace(/^\./, 'rxmcp'))
    const source = `for (const name of ${JSON.stringify(subpaths)}) { const m = await import(name); console.log(name, Object.keys(m).length) }`
    const result = await node(project, source)
    expect(result.stderr).toBe('')
    const lines = result.stdout.trim().split('\n')
    expect(lines.map(line => line.split(' ')[0])).toEqual(subpaths)
    for (const line of lines) expect(Number(line.split(' ')[1])).toBeGreaterThan(0)
  })

  /**
   * Each built file the entries (paths under the installed dist/) reach through the specifiers in
   * their code, and the bare specifiers met on the way; `dynamic: false` follows static imports
   * and re-exports only, not import() of a literal.
   */
  async function reached(entries: string[], { dynamic = true } = {}): Promise<{ files: string[]; bare: string[] }> {
    const dist = join(project, 'node_modules', 'rxmcp', 'dist')
    const files = new Set<string>()
    const bare = new Set<string>()
    const pending = entries.map(entry => join(dist, entry))
    while (pending.length > 0) {
      const file = pending.pop()!
      if (files.has(file)) continue
      files.add(file)
      for (const { specifier, isDynamic } of await importsOf(file)) {
        if (isDynamic && !dynamic) continue
        if (specifier.startsWith('.')) pending.push(join(file, '..', specifier))
        else bare.add(specifier)
      }
    }
    return { files: [...files], bare: [...bare] }
  }

  /** The specifiers a built file imports: static imports and re-exports (`import{a}from"./x.js"`, `export*from"./x.js"`) and import() of a literal. */
  async function importsOf(file: string): Promise<{ specifier: string; isDynamic: boolean }[]> {
    const code = await readFile(file, 'utf8')
    return [...code.matchAll(/(?:\bimport|\bexport)\s*(?:[\w$*{}\s,]*?\bfrom\s*)?\(?\s*["'`]([^"'`]+)["'`]/g)]
      .map(([text, specifier]) => ({ specifier: specifier!, isDynamic: /^import\s*\(/.test(text) }))
  }

  it('issue 24: the built browser, web and server entries reach no node: module and no ws through any import of their files, so the shared chunks hold nothing Node-only', async () => {
    for (const entries of [['browser.js'], ['entries/web.js'], ['actors/server.js']]) {
      const { files, bare } = await reached(entries)
      expect(files.length, entries[0]).toBeGreaterThan(1)
      expect(bare.filter(specifier => specifier.startsWith('node:') || specifier === 'ws'), entries[0]).toEqual([])
    }
    // The check sees Node imports: the stdio transport spawns its child through node:child_process.
    expect((await reached(['transports/stdio.js'])).bare).toContain('node:child_process')
  })

  it('issue 25: @opentelemetry/api is imported by one chunk of its own, which every entry reaches only through a dynamic import', async () => {
    const dist = join(project, 'node_modules', 'rxmcp', 'dist')
    const built = files.filter(path => path.endsWith('.js')).map(path => join(project, 'node_modules', 'rxmcp', path))
    const importers: string[] = []
    const sdkImporters: string[] = []
    for (const file of built) {
      const imports = await importsOf(file)
      if (imports.some(({ specifier }) => specifier === '@opentelemetry/api')) importers.push(file)
      if (imports.some(({ specifier }) => specifier === '@opentelemetry/sdk-node')) sdkImporters.push(file)
    }
    // The library's: one chunk, actors/telemetry.ts (and whatever only it needs); and the command's
    // (bin/otel.ts, which starts the Node SDK when OTEL_* asks for it), the only one to load the SDK.
    expect(importers.map(file => file.slice(dist.length + 1)).sort()).toEqual([expect.stringMatching(/^chunks\/cli-[\w-]+\.js$/), expect.stringMatching(/^chunks\/telemetry-[\w-]+\.js$/)])
    expect(sdkImporters.map(file => file.slice(dist.length + 1))).toEqual([expect.stringMatching(/^chunks\/cli-[\w-]+\.js$/)])
    const telemetry = importers.find(file => /chunks\/telemetry-/.test(file))!
    const entries = [...new Set([...Object.values(manifest.exports).flatMap(target => typeof target === 'string' ? [target] : Object.values(target as Record<string, string>)), ...Object.values(manifest.bin)])]
      .filter(target => target.endsWith('.js')).map(target => target.replace(/^\.\/dist\//, ''))
    expect(entries).toContain('index.js')
    for (const entry of entries) {
      const { files: statically, bare } = await reached([entry], { dynamic: false })
      expect(statically, entry).not.toContain(telemetry)
      expect(bare.filter(specifier => specifier.startsWith('@opentelemetry/')), entry).toEqual([])
    }
    // The check follows import() too: the server and the client entries reach the chunk that way.
    expect((await reached(['actors/server.js'])).files).toContain(telemetry)
    expect((await reached(['actors/client.js'])).files).toContain(telemetry)
  })

  it('is loaded by require() too, since no module of it awaits at top level (require(esm))', async () => {
    const result = await run(process.execPath, ['-e', "const m = require('rxmcp'); console.log(typeof m.createServer, typeof m.connect)"], project)
    expect(result.stdout.trim()).toBe('function function')
  })

  it('runs a stdio server from the installed package, called through the installed rxmcp command', async () => {
    const result = await run(join(project, 'node_modules', '.bin', 'rxmcp'), ['call', 'echo', '{"text":"hi"}', '--', process.execPath, 'server.mjs'], project)
    expect(result.code, result.stderr).toBe(0)
    expect(JSON.parse(result.stdout)).toEqual({ content: [{ type: 'text', text: 'echo: hi' }] })
  })

  it('issue 28: holds the web inspector\'s page (dist/ui/inspector.js, under 150 KB gzipped), which the installed `rxmcp inspect --ui` serves', async () => {
    expect(files).toContain('dist/ui/inspector.js')
    const built = await readFile(join(project, 'node_modules', 'rxmcp', 'dist', 'ui', 'inspector.js'), 'utf8')
    expect(gzipSync(built).length).toBeLessThan(150 * 1024)
    const child = spawn(join(project, 'node_modules', '.bin', 'rxmcp'), ['inspect', '--ui', '--no-open', '--', process.execPath, 'server.mjs'], { cwd: project, stdio: ['ignore', 'pipe', 'inherit'] })
    try {
      let stdout = ''
      const line = await new Promise<string>((resolve, reject) => {
        child.stdout!.on('data', chunk => { stdout += chunk; if (stdout.includes('\n')) resolve(stdout) })
        child.once('exit', code => reject(new Error(`exited ${code} before printing the URL`)))
      })
      const url = new URL(/^UI: (\S+)\n$/.exec(line)![1]!)
      const served = await new Promise<string>((resolve, reject) => {
        get(new URL(`/app.js${url.search}`, url), response => {
          let body = ''
          response.setEncoding('utf8')
          response.on('data', chunk => { body += chunk })
          response.on('end', () => resolve(body))
        }).on('error', reject)
      })
      expect(served).toBe(built)
    } finally {
      child.kill('SIGTERM')
    }
   }, 60_000)

  it('issue 20: leaves dist/bin/rxmcp.js executable after the build, so the command runs in the repository', async () => {
    // `npm pack` above ran the build script in this checkout.
    const result = await run(join(root, 'dist', 'bin', 'rxmcp.js'), ['--help'], root)
    expect(result.code, result.stderr).toBe(0)
    expect(result.stdout).toContain('Usage:')
  })

  it('answers initialize from the installed package without loading ajv, ws, msgpackr, yaml or node:http; ajv loads on the first tools/call, and yaml never', async () => {
    const { log, env } = await moduleRecorder('modules')
    const child = spawn(process.execPath, ['--import', './modules-record.mjs', 'server.mjs'], { cwd: project, env, stdio: ['pipe', 'pipe', 'inherit'] })
    try {
      const lines: string[] = []
      let pending = ''
      const waiters: (() => void)[] = []
      child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
        pending += chunk
        let end: number
        while ((end = pending.indexOf('\n')) >= 0) { lines.push(pending.slice(0, end)); pending = pending.slice(end + 1); waiters.shift()?.() }
      })
      const answer = async (message: object) => {
        const count = lines.length
        child.stdin.write(JSON.stringify(message) + '\n')
        while (lines.length === count) await new Promise<void>(resolve => waiters.push(resolve))
        return JSON.parse(lines[lines.length - 1]!)
      }
      const init = await answer({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'probe', version: '1' } } })
      expect(init.result.serverInfo.name).toBe('packaged')
      const before = await readFile(log, 'utf8')
      expect(before).toMatch(/node_modules\/rxmcp\/dist\/index\.js/)
      expect(before).not.toMatch(/node_modules\/(ajv|ws|msgpackr|yaml)\//)
      expect(before).not.toMatch(/^node:http$/m)
      child.stdin.write(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }) + '\n')
      const call = await answer({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'echo', arguments: { text: 'lazy' } } })
      expect(call.result.content[0].text).toBe('echo: lazy')
      const after = await readFile(log, 'utf8')
      expect(after).toMatch(/node_modules\/ajv\//)
      // yaml is the skills code's alone: a server that serves no skill never loads it.
      expect(after).not.toMatch(/node_modules\/yaml\//)
      // Issue 25: without the telemetry option nothing of OpenTelemetry loads, nor rxmcp's telemetry chunk.
      expect(after).not.toMatch(/node_modules\/@opentelemetry\//)
      expect(after).not.toMatch(/dist\/chunks\/telemetry-/)
    } finally {
      child.kill()
    }
  }, 60_000)

  it('issue 25: the same server with telemetry: true loads @opentelemetry/api and the telemetry chunk before it answers', async () => {
    await writeFile(join(project, 'server-telemetry.mjs'), (await readFile(join(project, 'server.mjs'), 'utf8'))
      .replace("createServer({ name: 'packaged', version: '1.0.0' })", "createServer({ name: 'packaged', version: '1.0.0' }, { telemetry: true })"))
    const { log, env } = await moduleRecorder('telemetry-modules')
    const result = await new Promise<{ code: number | null; stdout: string }>(resolve => {
      const child = execFile(process.execPath, ['--import', './telemetry-modules-record.mjs', 'server-telemetry.mjs'], { cwd: project, env, timeout: 30_000 }, (error, stdout) => resolve({ code: error === null ? 0 : 1, stdout }))
      // Initialize, then end stdin: the server answers and exits.
      child.stdin!.end(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'probe', version: '1' } } }) + '\n')
    })
    expect(JSON.parse(result.stdout.split('\n')[0]!).result.serverInfo.name).toBe('packaged')
    const loaded = await readFile(log, 'utf8')
    expect(loaded).toMatch(/node_modules\/@opentelemetry\/api\//)
    expect(loaded).toMatch(/node_modules\/rxmcp\/dist\/chunks\/telemetry-[\w-]+\.js/)
  }, 60_000)

  it('issue 23: validates tool arguments from the installed package under --disallow-code-generation-from-strings, with @cfworker/json-schema and never ajv', async () => {
    const { log, env } = await moduleRecorder('edge-modules')
    // Plain node on the built package, as a Worker runs it: new Function and eval throw EvalError.
    const child = spawn(process.execPath, ['--disallow-code-generation-from-strings', '--import', './edge-modules-record.mjs', 'server.mjs'], { cwd: project, env, stdio: ['pipe', 'pipe', 'inherit'] })
    try {
      type Answer = { id?: number; result?: { content: { text: string }[]; isError?: boolean } }
      const answers = new Map<number, Answer>()
      let pending = ''
      let heard = () => {}
      child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
        pending += chunk
        let end: number
        while ((end = pending.indexOf('\n')) >= 0) {
          const message = JSON.parse(pending.slice(0, end)) as Answer
          pending = pending.slice(end + 1)
          if (typeof message.id === 'number') answers.set(message.id, message)
          heard()
        }
      })
      const ask = async (id: number, method: string, params: object) => {
        child.stdin.write(JSON.stringify({ jsonrpc: '2.0', id, method, params }) + '\n')
        while (!answers.has(id)) await new Promise<void>(resolve => { heard = resolve })
        return answers.get(id)!
      }
      await ask(1, 'initialize', { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'edge', version: '1' } })
      child.stdin.write(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }) + '\n')
      expect((await ask(2, 'tools/call', { name: 'echo', arguments: { text: 7 } })).result).toEqual({ content: [{ type: 'text', text: 'Invalid arguments for tool echo: /text: must be string' }], isError: true })
      expect((await ask(3, 'tools/call', { name: 'echo', arguments: { text: 'edge' } })).result?.content[0]?.text).toBe('echo: edge')
      const loaded = await readFile(log, 'utf8')
      expect(loaded).toMatch(/node_modules\/rxmcp\/dist\/lib\/json-schema-interpreted\.js/)
      expect(loaded).toMatch(/node_modules\/@cfworker\/json-schema\//)
      expect(loaded).not.toMatch(/node_modules\/ajv\//)
    } finally {
      child.kill()
    }
  }, 60_000)

  it.each(['node16', 'bundler'])('type-checks a consumer against the installed declarations with moduleResolution %s', async resolution => {
    await writeFile(join(project, 'consumer.ts'), [
      "import { createServer, connect, type McpClient, type ToolDefinition } from 'rxmcp'",
      "import { stdio, stdioClient } from 'rxmcp/transports/stdio'",
      "import { connectInMemory } from 'rxmcp/testing'",
      "import { streamableHttp } from 'rxmcp/transports/streamable-http'",
      "import { httpClient } from 'rxmcp/transports/http-client'",
      "import { websocket } from 'rxmcp/transports/websocket'",
      "const definition: ToolDefinition = { inputSchema: { type: 'object' } }",
      "const server = createServer({ name: 'consumer', version: '1.0.0' })",
      "server.tool('t', definition, () => ({ content: [] }))",
      'void [stdio, connectInMemory, streamableHttp, httpClient, websocket]',
      "export const client: Promise<McpClient> = connect(stdioClient({ command: 'node', args: ['server.mjs'] }), { name: 'c', version: '1' })",
      // A deliberate mistake proves the declarations are read: it must be the only error.
      'export const wrong: string = createServer',
    ].join('\n'))
    const tsconfig = {
      compilerOptions: {
        strict: true, noEmit: true, target: 'es2022', lib: ['es2023', 'dom'], skipLibCheck: false,
        module: resolution === 'node16' ? 'node16' : 'esnext', moduleResolution: resolution,
        types: ['node'], typeRoots: [join(root, 'node_modules', '@types')],
      },
      files: ['consumer.ts'],
    }
    await writeFile(join(project, `tsconfig.${resolution}.json`), JSON.stringify(tsconfig))
    const result = await run(process.execPath, [join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', `tsconfig.${resolution}.json`], project)
    const errors = result.stdout.trim().split('\n').filter(line => line.includes('error TS'))
    expect(errors, errors.join("\n")).toHaveLength(1)
    expect(errors[0]).toMatch(/^consumer\.ts\(12,14\): error TS2322/)
  }, 120_000)
})
