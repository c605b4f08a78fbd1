import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { fileURLToPath } from 'node:url'
import { filter, firstValueFrom, lastValueFrom, shareReplay, take, toArray } from 'rxjs'
import { connect, type ClientOptions, type ListenEvent, type McpClient } from '../../actors/client.ts'
import { streamableHttpClient } from '../../transports/http-client.ts'
import { stdioClient } from '../../transports/stdio.ts'
import type { Transport } from '../../lib/transport.ts'
import { startSdkV2HttpServer } from './fixtures/sdk-v2-server-http.ts'

const stdioFixture = fileURLToPath(new URL('./fixtures/sdk-v2-server-stdio.ts', import.meta.url))
const INFO = { name: 'rxmcp-client', version: '1' }

/** The handlers the official server's input requests reach. */
const OPTIONS: ClientOptions = {
  elicitation: { form: params => ({ action: 'accept', content: { name: `Ada (asked "${params.message}")` } }) },
  sampling: params => ({ role: 'assistant', model: 'rxmcp-model', content: { type: 'text', text: `hi in ${params.maxTokens} tokens` } }),
}

const text = (result: { content: unknown[] }) => (result.content[0] as { text: string }).text

/** The same checks over each transport: the client speaks the modern era to the official server. */
function modernAgainstSdkV2(name: string, transport: () => Transport | Promise<Transport>) {
  describe(`the rxmcp client (auto era) against the official SDK v2 server over ${name}`, () => {
    let client: McpClient
    beforeAll(async () => { client = await connect(await transport(), INFO, OPTIONS) }, 30_000)
    afterAll(async () => { await client?.close() })

    it('detects the modern era through server/discover', () => {
      expect(client.era).toBe('modern')
      expect(client.protocolVersion).toBe('2026-07-28')
      expect(client.serverInfo).toEqual({ name: 'sdk-v2-interop', version: '2.4.0' })
      expect(client.serverCapabilities).toMatchObject({ tools: { listChanged: true } })
      expect(client.instructions).toBe('An official SDK server')
    })

    it('lists and calls tools', async () => {
      const tools = await lastValueFrom(client.tools().pipe(toArray()))
      expect(tools.map(tool => tool.name)).toEqual(['echo', 'ask', 'sample', 'change'])
      expect(text(await client.callTool('echo', { text: 'across SDKs' }))).toBe('across SDKs')
    })

    it('answers an elicitation input request (MRTR) with the elicitation handler, the state echoed', async () => {
      expect(text(await client.callTool('ask'))).toBe('Hello, Ada (asked "Your name?") (state asked-once)')
    })

    it('answers a sampling input request (MRTR) with the sampling handler', async () => {
      expect(text(await client.callTool('sample'))).toBe('model rxmcp-model said hi in 16 tokens')
    })

    it('listens: the acknowledgement, then the list change the server announces', async () => {
      const events = client.listen({ toolsListChanged: true, promptsListChanged: true }).pipe(shareReplay())
      const subscription = events.subscribe()
      // The official server honours only what it can deliver: tools, not prompts.
      expect(await firstValueFrom(events)).toEqual({ type: 'acknowledged', notifications: { toolsListChanged: true } })
      const changed = firstValueFrom(events.pipe(filter((event: ListenEvent) => event.type === 'notification'), take(1)))
      await client.callTool('change')
      expect(await changed).toMatchObject({ type: 'notification', method: 'notifications/tools/list_changed' })
      subscription.unsubscribe()
      // The client goes on after the listen stream was closed.
      expect(text(await client.callTool('echo', { text: 'after' }))).toBe('after')
    })
  })
}

let http: { url: string; close(): Promise<void> } | undefined
beforeAll(async () => { http = await startSdkV2HttpServer() })
afterAll(async () => { await http?.close() })

modernAgainstSdkV2('Streamable HTTP', () => streamableHttpClient(http!.url))
modernAgainstSdkV2('stdio', () => stdioClient({ command: process.execPath, args: ['--import', 'tsx', stdioFixture], stderr: 'inherit' }))

describe('the rxmcp client forced to the legacy era against the official SDK v2 server', () => {
  it('initializes over Streamable HTTP (the stateless legacy fallback) and calls tools', async () => {
    await using client = await connect(streamableHttpClient(http!.url), INFO, { ...OPTIONS, era: 'legacy' })
    expect(client.era).toBe('legacy')
    expect(client.protocolVersion).toBe('2025-11-25')
    expect((await client.listTools()).tools.map(tool => tool.name)).toEqual(['echo', 'ask', 'sample', 'change'])
    expect(text(await client.callTool('echo', { text: 'old school' }))).toBe('old school')
  })

  it('initializes over stdio (the connection pinned to the 2025 era) and calls tools', async () => {
    await using client = await connect(stdioClient({ command: process.execPath, args: ['--import', 'tsx', stdioFixture], stderr: 'inherit' }), INFO, { ...OPTIONS, era: 'legacy' })
    expect(client.era).toBe('legacy')
    expect(client.serverInfo).toMatchObject({ name: 'sdk-v2-interop' })
    expect(text(await client.callTool('echo', { text: 'piped' }))).toBe('piped')
    // The same handlers answer the live server-to-client requests the SDK turns its rounds into.
    expect(text(await client.callTool('sample'))).toBe('model rxmcp-model said hi in 16 tokens')
  }, 30_000)
})
