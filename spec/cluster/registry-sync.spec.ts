import { describe, expect, it } from 'vitest'
import { firstValueFrom, filter } from 'rxjs'
import { createServer, type McpServer, type Registration, type ServerHealth, type ToolDefinition } from '../../actors/server.ts'
import { RegistryMismatchWarning } from '../../actors/server/registry-sync.ts'
import { connect, type McpClient } from '../../actors/client.ts'
import { streamableHttp } from '../../transports/streamable-http.ts'
import { streamableHttpClient } from '../../transports/http-client.ts'
import { collected } from '../helpers/collected.ts'
import { useScaleOut } from '../helpers/scale-instances.ts'

/**
 * Issue 27, item 4: two instances of one server in this process, sharing a real redis-server
 * through `redisScaleOut`, each on its own HTTP listener with a client of its own.
 */
const { start } = useScaleOut()

interface Instance { server: McpServer; echo: Registration<ToolDefinition>; extra: Registration<ToolDefinition>; warnings: unknown[] }

/** One instance with the boot registry every instance has: `echo`, and `extra` registered disabled (to be enabled at runtime). */
async function instance(prefix: string, more?: (server: McpServer, boot: { echo: Registration<ToolDefinition>; extra: Registration<ToolDefinition> }) => void): Promise<Instance> {
  const warnings: unknown[] = []
  let made!: Instance
  const started = await start(prefix, scale => {
    const server = createServer({ name: 'shared', version: '1' }, { ...scale.server, reportUnhandledError: error => warnings.push(error) })
    const echo = server.tool('echo', { description: 'Echo', inputSchema: { type: 'object', properties: { text: { type: 'string' } } } }, ({ text }) => ({ content: [{ type: 'text', text: `echo ${String(text)}` }] }))
    const extra = server.tool('extra', { description: 'Added at runtime' }, () => ({ content: [{ type: 'text', text: 'extra' }] }))
    extra.disable()
    more?.(server, { echo, extra })
    made = { server, echo, extra, warnings }
    return { server, http: streamableHttp({ host: '127.0.0.1', port: 0 }) }
  })
  listenerUrls.set(started.server, started.http.url!)
  return made
}

/** Resolves with the first health that passes `check` (bounded by the test's timeout). */
function healthWhen(server: McpServer, check: (health: ServerHealth) => boolean): Promise<ServerHealth> {
  return firstValueFrom(server.health.pipe(filter(check)))
}

const toolNames = async (client: McpClient) => (await client.listTools()).tools.map(tool => tool.name).sort()

describe('one registry across instances (ServerOptions.eventBus)', () => {
  it('a runtime enable, update and remove on one instance is listed by both, and each session hears list_changed once per change', async () => {
    const a = await instance('reg1:')
    const b = await instance('reg1:')
    // b said hello and a answered: both buses are listening.
    expect((await healthWhen(b.server, health => health.registry.status !== 'alone')).registry).toMatchObject({ status: 'agrees', differences: [] })
    const clients = await Promise.all([a, b].map(each => connectTo(each.server)))
    try {
      const changes = clients.map(client => {
        const heard = collected<unknown>()
        client.notifications('notifications/tools/list_changed').subscribe(item => heard.push(item))
        return heard
      })
      const logs = clients.map(client => {
        const heard = collected<unknown>()
        client.notifications('notifications/message').subscribe(item => heard.push(item))
        return heard
      })
      expect(await toolNames(clients[1]!)).toEqual(['echo'])

      // 1: enabled on a, listed (and callable) on b, whose handler was there all along.
      a.extra.enable()
      await Promise.all(changes.map(heard => heard.when(items => items.length >= 1)))
      expect(await toolNames(clients[1]!)).toEqual(['echo', 'extra'])
      expect(b.extra.isEnabled).toBe(true)
      expect(await clients[1]!.callTool('extra', {})).toMatchObject({ content: [{ text: 'extra' }] })
      // 2: a description changed on b reaches a.
      b.echo.update({ description: 'Echo, updated' })
      await Promise.all(changes.map(heard => heard.when(items => items.length >= 2)))
      expect((await clients[0]!.listTools()).tools.find(tool => tool.name === 'echo')?.description).toBe('Echo, updated')
      // 3: removed on a, gone on b.
      a.extra.remove()
      await Promise.all(changes.map(heard => heard.when(items => items.length >= 3)))
      expect(await toolNames(clients[1]!)).toEqual(['echo'])
      // 4, the marker: disabled on a. Once b's registry shows it, a log line sent after it on each
      // session's stream arrives after every list_changed each instance sent before: exactly four.
      a.echo.disable()
      await until(() => !b.echo.isEnabled)
      a.server.log('info', 'barrier')
      b.server.log('info', 'barrier')
      await Promise.all(logs.map(heard => heard.when(items => items.length >= 1)))
      expect(changes.map(heard => heard.items.length)).toEqual([4, 4])
      expect(await toolNames(clients[0]!)).toEqual([])
      expect(await toolNames(clients[1]!)).toEqual([])
      expect([...a.warnings, ...b.warnings]).toEqual([])
    } finally {
      await Promise.all(clients.map(client => client.close()))
    }
  }, 30_000)

  it('an instance that starts later catches up with the runtime changes made before, and warns when its registry still differs', async () => {
    const a = await instance('reg2:')
    // At runtime on the only instance: no one hears it now.
    a.extra.enable()
    a.echo.update({ description: 'Echo v2' })
    // b boots with `extra` disabled and the old description, and catches up.
    const b = await instance('reg2:')
    const health = await healthWhen(b.server, each => each.registry.status !== 'alone')
    expect(health.registry.status).toBe('agrees')
    expect(b.extra.isEnabled).toBe(true)
    const client = await connectTo(b.server)
    try {
      expect((await client.listTools()).tools.map(tool => [tool.name, tool.description])).toEqual([['echo', 'Echo v2'], ['extra', 'Added at runtime']])
    } finally {
      await client.close()
    }
    // c runs other code: a tool the others lack, and `extra` left out.
    const c = await instance('reg2:', server => {
      server.tool('only_c', {}, () => ({ content: [] }))
    })
    const differs = await healthWhen(c.server, each => each.registry.status === 'differs' && each.registry.differences.length === 2)
    for (const difference of differs.registry.differences) expect(difference.entries).toEqual(['tool:only_c (only here)'])
    // Told once per instance, as a RegistryMismatchWarning (console.warn by default).
    await until(() => c.warnings.length === 2)
    expect(c.warnings.every(warning => warning instanceof RegistryMismatchWarning && warning.code === 'RXMCP_WARN_REGISTRY_MISMATCH')).toBe(true)
    expect((c.warnings[0] as Error).message).toMatch(/registry differs from instance [\w-]+'s: tool:only_c \(only here\)/)
  }, 30_000)

  it('changes made before the first listen are this instance\'s boot configuration: they are not shared', async () => {
    const a = await instance('reg3:')
    // b enables `extra` at boot (its configuration): a, already running, keeps it disabled.
    const b = await instance('reg3:', (server, boot) => {
      server.tool('boot_only', {}, () => ({ content: [] }))
      boot.extra.enable()
    })
    const health = await healthWhen(b.server, each => each.registry.status !== 'alone')
    expect(a.extra.isEnabled).toBe(false)
    // ... and their registries differ by what b's boot did.
    expect(b.extra.isEnabled).toBe(true)
    expect(health.registry.differences[0]?.entries).toEqual(['tool:boot_only (only here)', 'tool:extra (differs)'])
  }, 30_000)
})

/** A legacy-era client of the instance's HTTP listener. */
async function connectTo(server: McpServer): Promise<McpClient> {
  const url = listenerUrls.get(server)
  if (url === undefined) throw new Error('no listener URL for this server')
  return connect(streamableHttpClient(url), { name: 'watcher', version: '1' }, { era: 'legacy', protocolVersion: '2025-11-25' })
}

/** Polls `check` every 10 ms, for at most 10 s. */
async function until(check: () => boolean): Promise<void> {
  const end = Date.now() + 10_000
  while (!check()) {
    if (Date.now() > end) throw new Error('condition not met within 10 s')
    await new Promise(resolve => setTimeout(resolve, 10))
  }
}

/** Each instance's listener URL. */
const listenerUrls = new WeakMap<McpServer, string>()
