import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createRequire } from 'node:module'
import { lastValueFrom, toArray } from 'rxjs'
import { connect, type McpClient } from '../../actors/client.ts'
import { stdioClient } from '../../transports/stdio.ts'
import { collected } from '../helpers/collected.ts'

const everythingBin = createRequire(import.meta.url).resolve('@modelcontextprotocol/server-everything/dist/index.js')

describe('the rxmcp client against @modelcontextprotocol/server-everything', () => {
  let client: McpClient
  const sampled: unknown[] = []
  // The peer's tools/list_changed notifications, from right after the handshake on.
  const listChanges = collected<unknown>()

  beforeAll(async () => {
    client = await connect(stdioClient({ command: process.execPath, args: [everythingBin, 'stdio'], stderr: 'ignore' }), { name: 'rxmcp-client', version: '1' }, {
      sampling: params => { sampled.push(params); return { role: 'assistant', model: 'rxmcp-model', content: { type: 'text', text: 'sampled by rxmcp' } } },
      roots: [{ uri: 'file:///rx', name: 'rx' }],
    })
    client.notifications('notifications/tools/list_changed').subscribe(change => listChanges.push(change))
  }, 30_000)

  afterAll(async () => { await client?.close() })

  it('lists tools, resources, templates and prompts across pages', async () => {
    expect(client.serverInfo.name).toContain('everything')
    const tools = await lastValueFrom(client.tools().pipe(toArray()))
    expect(tools.map(tool => tool.name)).toEqual(expect.arrayContaining(['echo', 'get-sum', 'trigger-long-running-operation']))
    // This server sends each list in one page (no nextCursor); the paginating walk ends after it.
    const resources = await lastValueFrom(client.resources().pipe(toArray()))
    expect(resources.length).toBeGreaterThan(5)
    expect(resources).toHaveLength((await client.listResources()).resources.length)
    expect(await lastValueFrom(client.resourceTemplates().pipe(toArray()))).not.toHaveLength(0)
    expect(await lastValueFrom(client.prompts().pipe(toArray()))).not.toHaveLength(0)
  })

  it('calls its echo tool', async () => {
    expect(await client.callTool('echo', { message: 'hello everything' })).toEqual({ content: [{ type: 'text', text: 'Echo: hello everything' }] })
  })

  it('reports progress from its long-running operation', async () => {
    const progress: number[] = []
    const result = await client.callTool('trigger-long-running-operation', { duration: 0.3, steps: 3 }, { onProgress: event => progress.push(event.progress) })
    expect(result.content[0]).toMatchObject({ type: 'text', text: expect.stringContaining('completed') })
    expect(progress).toEqual([1, 2, 3])
  })

  it('answers its sampling request', async () => {
    // Capability-dependent tools are registered after initialize, each registration announced with
    // tools/list_changed: the list is read again on each announcement until they are there.
    for (;;) {
      const heard = listChanges.items.length
      const names = (await lastValueFrom(client.tools().pipe(toArray()))).map(tool => tool.name)
      if (names.includes('trigger-sampling-request')) break
      await listChanges.when(items => items.length > heard)
    }
    const result = await client.callTool('trigger-sampling-request', { prompt: 'What is rxmcp?', maxTokens: 50 })
    expect(JSON.stringify(result.content)).toContain('sampled by rxmcp')
    expect(sampled).toHaveLength(1)
    expect(sampled[0]).toMatchObject({ maxTokens: 50 })
  })

  it('lets its roots tool read this client\'s roots', async () => {
    const result = await client.callTool('get-roots-list')
    expect(JSON.stringify(result.content)).toContain('file:///rx')
  })
})
