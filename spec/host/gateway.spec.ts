import { afterEach, describe, expect, it } from 'vitest'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { execFile } from 'node:child_process'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { filter, firstValueFrom } from 'rxjs'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { LoggingMessageNotificationSchema, ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js'
import { Client as ClientV2, StreamableHTTPClientTransport as StreamableV2 } from '@modelcontextprotocol/client'
import { createHost, type Host } from '../../host/host.ts'
import { hostServer } from '../../host/gateway.ts'
import { parseHostConfig } from '../../lib/host-config.ts'
import { streamableHttp } from '../../transports/streamable-http.ts'

/**
 * The gateway: the host's aggregated view as one MCP server, driven by the official SDK clients
 * (v1.32 in the legacy era, v2 pinned to 2026-07-28) over Streamable HTTP, and by `rxmcp gateway`
 * as a child process over stdio.
 */
const root = fileURLToPath(new URL('../..', import.meta.url))
const EXAMPLE = { command: process.execPath, args: ['--import', 'tsx', 'examples/everything/server.ts'] }
const text = (result: unknown) => ((result as { content: { text?: string }[] }).content[0]!).text

const cleanup: (() => Promise<void>)[] = []
afterEach(async () => { for (const close of cleanup.splice(0).reverse()) await close() })

async function readyHost(servers: Record<string, unknown>): Promise<Host> {
  const host = createHost(parseHostConfig({ mcpServers: servers }))
  cleanup.push(() => host.close())
  const names = Object.keys(servers)
  await firstValueFrom(host.tools.pipe(filter(tools => names.every(name => tools.some(tool => tool.server === name)))))
  return host
}

async function gatewayUrl(host: Host): Promise<string> {
  const gateway = hostServer(host)
  const http = streamableHttp()
  await gateway.server.listen(http)
  cleanup.push(() => gateway.close())
  return http.url!
}

describe('the gateway', () => {
  it('serves the aggregated view to the official SDK 1.32 client: namespaced tools, routed calls with progress, logs, resources, list_changed on reload', async () => {
    const host = await readyHost({ one: EXAMPLE, two: EXAMPLE })
    const url = await gatewayUrl(host)
    const client = new Client({ name: 'sdk', version: '1' })
    await client.connect(new StreamableHTTPClientTransport(new URL(url)))
    cleanup.push(() => client.close())
    const { tools } = await client.listTools()
    expect(tools.map(tool => tool.name)).toEqual(expect.arrayContaining(['one__echo', 'two__echo', 'one__long_running']))
    expect(tools.find(tool => tool.name === 'one__add')?.inputSchema).toMatchObject({ type: 'object', required: ['a', 'b'] })
    expect(text(await client.callTool({ name: 'two__echo', arguments: { text: 'through the gateway' } }))).toContain('through the gateway')
    const progress: number[] = []
    await client.callTool({ name: 'one__long_running', arguments: { steps: 3, ms: 5 } }, undefined, { onprogress: event => progress.push(event.progress) })
    expect(progress).toEqual([1, 2, 3])
    // A server's log message reaches the gateway's clients, the server named in the logger.
    await client.setLoggingLevel('info')
    let logged!: (params: unknown) => void
    const isLogged = new Promise<unknown>(resolve => { logged = resolve })
    client.setNotificationHandler(LoggingMessageNotificationSchema, notification => logged(notification.params))
    await client.callTool({ name: 'one__log', arguments: { level: 'warning', message: 'careful' } })
    expect(await isLogged).toEqual({ level: 'warning', logger: 'one/everything', data: 'careful' })
    const { resources } = await client.listResources()
    expect(resources.length).toBeGreaterThan(0)
    expect((await client.readResource({ uri: resources[0]!.uri })).contents[0]!.uri).toBe(resources[0]!.uri)
    // A server removed from the config: the client is told, and its tools are gone.
    let changed!: () => void
    const isChanged = new Promise<void>(resolve => { changed = resolve })
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => changed())
    await host.reload(parseHostConfig({ mcpServers: { one: EXAMPLE } }))
    await isChanged
    const after = await client.listTools()
    expect(after.tools.some(tool => tool.name.startsWith('two__'))).toBe(false)
    expect(after.tools.some(tool => tool.name === 'one__echo')).toBe(true)
  }, 60_000)

  it('is driven by MCP Inspector\'s CLI over Streamable HTTP: tools/list, tools/call, resources/list', async () => {
    const host = await readyHost({ one: EXAMPLE })
    const url = await gatewayUrl(host)
    const inspector = createRequire(import.meta.url).resolve('@modelcontextprotocol/inspector-cli/build/index.js')
    const run = (...args: string[]) => new Promise<{ code: number; stdout: string; stderr: string }>(resolve => {
      // Run from its own folder: it finds its package.json relative to the working directory.
      execFile(process.execPath, [inspector, url, '--transport', 'http', ...args], { cwd: dirname(inspector), timeout: 30_000 }, (error, stdout, stderr) => {
        resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr })
      })
    })
    const listed = await run('--method', 'tools/list')
    expect(listed.code, listed.stderr).toBe(0)
    expect(JSON.parse(listed.stdout).tools.map((tool: { name: string }) => tool.name)).toContain('one__echo')
    const called = await run('--method', 'tools/call', '--tool-name', 'one__echo', '--tool-arg', 'text=from the inspector')
    expect(called.code, called.stderr).toBe(0)
    expect(JSON.parse(called.stdout).content[0].text).toContain('from the inspector')
    const resources = await run('--method', 'resources/list')
    expect(JSON.parse(resources.stdout).resources.length).toBeGreaterThan(0)
  }, 60_000)

  it('serves the official SDK v2 client in the modern era (2026-07-28)', async () => {
    const host = await readyHost({ one: EXAMPLE })
    const url = await gatewayUrl(host)
    const client = new ClientV2({ name: 'sdk-v2', version: '1' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } })
    await client.connect(new StreamableV2(new URL(url)))
    cleanup.push(() => client.close())
    const { tools } = await client.listTools()
    expect(tools.some(tool => tool.name === 'one__echo')).toBe(true)
    expect(text(await client.callTool({ name: 'one__echo', arguments: { text: 'modern' } }))).toContain('modern')
  }, 60_000)

  it('runs as `rxmcp gateway --config` over stdio, and `rxmcp inspect --config` reports every server', async () => {
    const scratch = await mkdtemp(join(tmpdir(), 'rxmcp-gateway-'))
    cleanup.push(() => rm(scratch, { recursive: true, force: true }))
    const config = join(scratch, 'mcp.json')
    await writeFile(config, JSON.stringify({ mcpServers: { one: EXAMPLE, broken: { command: '/nonexistent/server' } } }))
    const client = new Client({ name: 'sdk', version: '1' })
    // The gateway's view fills in as its servers get ready, and it says so: list_changed.
    let changed!: () => void
    const isChanged = new Promise<void>(resolve => { changed = resolve })
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => changed())
    await client.connect(new StdioClientTransport({ command: process.execPath, args: ['--import', 'tsx', 'bin/rxmcp.ts', 'gateway', '--config', config], cwd: root, stderr: 'pipe' }))
    cleanup.push(() => client.close())
    const names = async () => (await client.listTools()).tools.map(tool => tool.name)
    if (!(await names()).includes('one__echo')) await isChanged
    expect(await names()).toContain('one__echo')
    expect(text(await client.callTool({ name: 'one__echo', arguments: { text: 'stdio gateway' } }))).toContain('stdio gateway')

    const inspected = await new Promise<{ code: number; stdout: string }>(resolve => {
      execFile(process.execPath, ['--import', 'tsx', 'bin/rxmcp.ts', 'inspect', '--config', config, '--json'], { cwd: root, timeout: 60_000 }, (error, stdout) => {
        resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout })
      })
    })
    // A failed server makes the exit code 1; the report still lists everything.
    expect(inspected.code).toBe(1)
    const report = JSON.parse(inspected.stdout)
    expect(report.servers.one.status).toBe('ready')
    expect(report.servers.broken).toMatchObject({ status: 'failed', reason: expect.stringContaining('could not start') })
    expect(report.tools.map((tool: { name: string }) => tool.name)).toContain('one__echo')
  }, 90_000)

  it('refuses a config with errors, naming the file, the server and the field', async () => {
    const scratch = await mkdtemp(join(tmpdir(), 'rxmcp-gateway-bad-'))
    cleanup.push(() => rm(scratch, { recursive: true, force: true }))
    const config = join(scratch, 'mcp.json')
    await writeFile(config, JSON.stringify({ mcpServers: { one: { url: 'ftp://nope' } } }))
    const result = await new Promise<{ code: number; stderr: string }>(resolve => {
      execFile(process.execPath, ['--import', 'tsx', 'bin/rxmcp.ts', 'inspect', '--config', config], { cwd: root, timeout: 30_000 }, (error, _stdout, stderr) => {
        resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stderr })
      })
    })
    expect(result.code).toBe(1)
    expect(result.stderr).toContain(`${config}: Invalid mcpServers configuration`)
    expect(result.stderr).toContain('mcpServers.one.url: "ftp://nope" is not a http(s) URL')
  }, 30_000)
})
