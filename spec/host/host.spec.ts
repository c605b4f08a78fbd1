import { afterEach, describe, expect, it } from 'vitest'
import { createRequire } from 'node:module'
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { filter, firstValueFrom } from 'rxjs'
import { createHost, startServerClient, type Host, type HostOptions } from '../../host/host.ts'
import type { ServerState } from '../../host/supervisor.ts'
import { parseHostConfig, type HostConfig } from '../../lib/host-config.ts'
import { createServer } from '../../actors/server.ts'
import { streamableHttp } from '../../transports/streamable-http.ts'
import { websocket } from '../../transports/websocket.ts'

/**
 * The host against real servers as child processes (the everything example, the official
 * server-everything and server-filesystem), one over Streamable HTTP and one over WebSocket, all
 * from one mcpServers document; then the faults: a server killed mid-call, one that never starts,
 * one that crashes with a message on stderr, a reload.
 */
const require = createRequire(import.meta.url)
const EVERYTHING_EXAMPLE = { command: process.execPath, args: ['--import', 'tsx', 'examples/everything/server.ts'] }
const OFFICIAL_EVERYTHING = { command: process.execPath, args: [require.resolve('@modelcontextprotocol/server-everything/dist/index.js'), 'stdio'] }
const FILESYSTEM = { command: process.execPath, args: [require.resolve('@modelcontextprotocol/server-filesystem/dist/index.js')] }
const FAST_RESTARTS: HostOptions['restart'] = { initial: 20, max: 100, retries: 2 }

const cleanup: (() => Promise<void>)[] = []
afterEach(async () => { for (const close of cleanup.splice(0).reverse()) await close() })

function host(config: HostConfig, options: HostOptions = {}): Host {
  const started = createHost(config, { restart: FAST_RESTARTS, ...options })
  cleanup.push(() => started.close())
  return started
}

function stateOf(target: Host, server: string, status: ServerState['status']): Promise<ServerState> {
  return firstValueFrom(target.states.pipe(filter(states => states.get(server)?.status === status))).then(states => states.get(server)!)
}

function toolsNamed(target: Host, names: string[]): Promise<unknown> {
  return firstValueFrom(target.tools.pipe(filter(tools => names.every(name => tools.some(tool => tool.name === name)))))
}

const text = (result: { content: unknown[] }) => (result.content[0] as { text: string }).text

describe('the host, against real servers', () => {
  it('aggregates stdio, HTTP and WebSocket servers from one config, namespaced, and routes calls, reads and prompts', async () => {
    const remote = createServer({ name: 'remote', version: '1' })
    remote.tool('hello', {}, () => ({ content: [{ type: 'text', text: 'hello over http' }] }))
    const http = streamableHttp()
    await remote.listen(http)
    const ws = websocket()
    await remote.listen(ws)
    cleanup.push(() => remote.close())
    const config = parseHostConfig({
      mcpServers: {
        example: EVERYTHING_EXAMPLE,
        official: OFFICIAL_EVERYTHING,
        web: { type: 'http', url: http.url },
        socket: { url: ws.url },
        off: { command: 'does-not-exist', disabled: true },
      },
    })
    const started = host(config)
    await Promise.all(['example', 'official', 'web', 'socket'].map(name => stateOf(started, name, 'ready')))
    expect(started.currentStates().has('off')).toBe(false)
    await toolsNamed(started, ['example__echo', 'official__echo', 'web__hello', 'socket__hello'])
    const names = started.currentTools().map(tool => tool.name)
    expect(new Set(names).size).toBe(names.length)
    for (const name of names) expect(name).toMatch(/^[A-Za-z0-9_-]{1,64}$/)
    expect(text(await started.callTool('example__echo', { text: 'hi' }))).toContain('hi')
    expect(text(await started.callTool('web__hello'))).toBe('hello over http')
    expect(text(await started.callTool('socket__hello'))).toBe('hello over http')
    const progress: number[] = []
    await started.callTool('example__long_running', { steps: 3, ms: 5 }, { onProgress: event => progress.push(event.progress) })
    expect(progress).toEqual([1, 2, 3])
    // Resources are read at the server that listed them; prompts are namespaced like tools.
    const resource = await firstValueFrom(started.resources.pipe(filter(list => list.some(entry => entry.server === 'example'))))
    const first = resource.find(entry => entry.server === 'example')!
    expect((await started.readResource(first.resource.uri)).contents[0]!.uri).toBe(first.resource.uri)
    const prompts = await firstValueFrom(started.prompts.pipe(filter(list => list.some(entry => entry.server === 'official'))))
    const prompt = prompts.find(entry => entry.server === 'official' && (entry.prompt.arguments ?? []).every(arg => !arg.required))!
    expect(prompt.name.startsWith('official__')).toBe(true)
    expect((await started.getPrompt(prompt.name)).messages.length).toBeGreaterThan(0)
  }, 60_000)

  it('exposes each server\'s configured roots, and server-filesystem enforces them', async () => {
    const scratch = await mkdtemp(join(tmpdir(), 'rxmcp-host-roots-'))
    cleanup.push(() => rm(scratch, { recursive: true, force: true }))
    await mkdir(join(scratch, 'allowed'))
    await writeFile(join(scratch, 'allowed', 'note.txt'), 'inside')
    await writeFile(join(scratch, 'secret.txt'), 'TOP-SECRET-CONTENT')
    // The server learns its directories from the roots the host gives it, and says so on stderr.
    let updated!: () => void
    const isUpdated = new Promise<void>(resolve => { updated = resolve })
    const started = host(parseHostConfig({ mcpServers: { files: { ...FILESYSTEM, roots: [join(scratch, 'allowed')] } } }), {
      allowedRoots: [scratch],
      start: (config, options, stderr) => startServerClient(config, options, chunk => {
        stderr(chunk)
        if (chunk.includes('Updated allowed directories from MCP roots')) updated()
      }),
    })
    await stateOf(started, 'files', 'ready')
    await toolsNamed(started, ['files__read_text_file'])
    await isUpdated
    expect(text(await started.callTool('files__list_allowed_directories', {}))).toContain('allowed')
    expect(text(await started.callTool('files__read_text_file', { path: join(scratch, 'allowed', 'note.txt') }))).toBe('inside')
    const outside = await started.callTool('files__read_text_file', { path: join(scratch, 'allowed', '..', 'secret.txt') })
    expect(outside.isError).toBe(true)
    expect(text(outside)).not.toContain('TOP-SECRET-CONTENT')
  }, 60_000)

  it('refuses a root outside the allowed ones: that server fails, the others run', async () => {
    const started = host(parseHostConfig({ mcpServers: { files: { ...FILESYSTEM, roots: ['/etc'] }, example: EVERYTHING_EXAMPLE } }), { allowedRoots: [tmpdir()] })
    const failed = await stateOf(started, 'files', 'failed')
    expect(failed).toMatchObject({ reason: expect.stringContaining('outside the allowed roots') })
    await stateOf(started, 'example', 'ready')
  }, 60_000)
})

describe('the host, faults', () => {
  it('a server killed mid-call: the call fails at once naming it, the server restarts, later calls work', async () => {
    const started = host(parseHostConfig({ mcpServers: { example: EVERYTHING_EXAMPLE, other: EVERYTHING_EXAMPLE } }))
    await Promise.all([stateOf(started, 'example', 'ready'), stateOf(started, 'other', 'ready')])
    await toolsNamed(started, ['example__long_running', 'other__echo'])
    const firstPid = started.pid('example')!
    let running!: () => void
    const isRunning = new Promise<void>(resolve => { running = resolve })
    const call = started.callTool('example__long_running', { steps: 100, ms: 100 }, { onProgress: () => running() })
    const outcome = call.then(() => 'answered', (error: Error) => error.message)
    // Killed once the call is known to be under way (its first progress report).
    await isRunning
    process.kill(firstPid, 'SIGKILL')
    expect(await outcome).toMatch(/^example: /)
    // The other server never noticed.
    expect(text(await started.callTool('other__echo', { text: 'still here' }))).toContain('still here')
    await stateOf(started, 'example', 'ready')
    expect(started.pid('example')).not.toBe(firstPid)
    await toolsNamed(started, ['example__echo'])
    expect(text(await started.callTool('example__echo', { text: 'back' }))).toContain('back')
  }, 60_000)

  it('a server that never starts is marked failed after its restarts; one that crashes keeps its last stderr lines', async () => {
    const started = host(parseHostConfig({
      mcpServers: {
        missing: { command: '/nonexistent/mcp-server' },
        crashing: { command: process.execPath, args: ['-e', 'console.error("config file not found: /etc/app.toml"); process.exit(3)'] },
        example: EVERYTHING_EXAMPLE,
      },
    }))
    const missing = await stateOf(started, 'missing', 'failed')
    expect(missing).toMatchObject({ reason: expect.stringContaining('3 times in a row') })
    const crashing = await stateOf(started, 'crashing', 'failed')
    expect((crashing as Extract<ServerState, { status: 'failed' }>).stderr).toContain('config file not found: /etc/app.toml')
    await stateOf(started, 'example', 'ready')
    await expect(started.callTool('missing__anything')).rejects.toThrow(/unknown tool/)
  }, 60_000)

  it('reloads: added servers start, removed ones stop, changed ones restart, untouched ones keep their client', async () => {
    const started = host(parseHostConfig({ mcpServers: { keep: EVERYTHING_EXAMPLE, drop: EVERYTHING_EXAMPLE, change: EVERYTHING_EXAMPLE } }))
    await Promise.all(['keep', 'drop', 'change'].map(name => stateOf(started, name, 'ready')))
    const kept = started.client('keep')
    const changedPid = started.pid('change')
    await started.reload(parseHostConfig({
      mcpServers: { keep: EVERYTHING_EXAMPLE, change: { ...EVERYTHING_EXAMPLE, env: { CHANGED: '1' } }, add: EVERYTHING_EXAMPLE },
    }))
    await Promise.all(['change', 'add'].map(name => stateOf(started, name, 'ready')))
    expect(started.client('keep')).toBe(kept)
    expect(started.currentStates().has('drop')).toBe(false)
    expect(started.pid('change')).not.toBe(changedPid)
    await toolsNamed(started, ['add__echo', 'change__echo', 'keep__echo'])
    expect(started.currentTools().some(tool => tool.server === 'drop')).toBe(false)
  }, 60_000)
})

describe('the host, elicitation', () => {
  it('answers a server\'s elicitation through the application\'s hook, after consent', async () => {
    const asked: string[] = []
    const started = host(parseHostConfig({ mcpServers: { example: EVERYTHING_EXAMPLE } }), {
      consent: request => { asked.push(request.kind); return 'allow-once' },
      elicitation: async (params, server) => ({ action: 'accept', content: { name: `${server} user`, age: 41 } }),
    })
    await toolsNamed(started, ['example__elicit'])
    const result = await started.callTool('example__elicit', {})
    expect(result.structuredContent).toMatchObject({ action: 'accept', content: { name: 'example user', age: 41 } })
    expect(asked).toEqual(['tool', 'elicitation'])
  }, 60_000)
})

describe('the host, policy', () => {
  it('applies allow and deny lists, and asks for consent before tool calls (allow-always remembered, deny refused)', async () => {
    const asked: string[] = []
    const answers: Record<string, 'allow-once' | 'allow-always' | 'deny'> = { echo: 'allow-always', add: 'deny' }
    const started = host(parseHostConfig({ mcpServers: { example: { ...EVERYTHING_EXAMPLE, tools: { allow: ['echo', 'add', 'fail'], deny: ['fail'] } } } }), {
      consent: request => { if (request.kind === 'tool') asked.push(request.tool); return answers[request.kind === 'tool' ? request.tool : ''] ?? 'deny' },
    })
    await stateOf(started, 'example', 'ready')
    await toolsNamed(started, ['example__echo', 'example__add'])
    expect(started.currentTools().map(tool => tool.tool.name).sort()).toEqual(['add', 'echo'])
    await started.callTool('example__echo', { text: 'a' })
    await started.callTool('example__echo', { text: 'b' })
    await expect(started.callTool('example__add', { a: 1, b: 2 })).rejects.toThrow('tool add denied by the user')
    expect(asked).toEqual(['echo', 'add'])
  }, 60_000)
})
