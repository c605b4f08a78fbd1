import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { spawn, type ChildProcess } from 'node:child_process'
import { createRequire } from 'node:module'
import { fileURLToPath } from 'node:url'
import { lastValueFrom, toArray } from 'rxjs'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js'
import { CreateMessageRequestSchema, ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js'
import { createEverythingServer } from '../../examples/everything/everything.ts'
import { collected } from '../helpers/collected.ts'
import { streamableHttp, type StreamableHttpServer } from '../../transports/streamable-http.ts'
import { httpClient, sseClient, streamableHttpClient } from '../../transports/http-client.ts'
import { connect } from '../../actors/client.ts'
import type { McpServer } from '../../actors/server.ts'
import { progressOfLastAnswer, recordWire } from '../helpers/sdk-wire.ts'
import { freeLoopbackPort } from '../../examples/cluster/spawn-nginx.ts'

const fixtures = fileURLToPath(new URL('./fixtures/', import.meta.url))
const require = createRequire(import.meta.url)

/** Starts a child that prints its URL on its first stdout line. */
async function child(args: string[], env: Record<string, string> = {}, readyPattern = /^(http:\/\/\S+)/m): Promise<{ process: ChildProcess; url: string }> {
  const processHandle = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } })
  const url = await new Promise<string>((resolve, reject) => {
    let seen = ''
    const onData = (chunk: Buffer) => {
      seen += chunk.toString()
      const match = readyPattern.exec(seen)
      if (match) resolve(match[1]!)
    }
    processHandle.stdout!.on('data', onData)
    processHandle.stderr!.on('data', onData)
    processHandle.on('exit', code => reject(new Error(`exited ${code}: ${seen}`)))
    // A peer that never says it is ready is killed, not left behind.
    setTimeout(() => { processHandle.kill(); reject(new Error(`not ready: ${seen}`)) }, 20_000)
  })
  return { process: processHandle, url }
}

function officialClient(): Client {
  const client = new Client({ name: 'official', version: '1' }, { capabilities: { sampling: {}, elicitation: {} } })
  client.setRequestHandler(CreateMessageRequestSchema, async () => ({ role: 'assistant', model: 'official-model', content: { type: 'text', text: 'sampled over http' } }))
  client.setRequestHandler(ElicitRequestSchema, async () => ({ action: 'accept', content: { name: 'Http' } }))
  return client
}

describe('official SDK HTTP clients against the rxmcp HTTP server', () => {
  let server: McpServer
  let http: StreamableHttpServer
  // The cancellations the server has read: it handles each as it reads it, so one heard here is handled.
  const cancellations = collected<unknown>()

  beforeAll(async () => {
    server = createEverythingServer({
      inspect: event => { if (event.type === 'rxmcp.frame.in' && (event.message as { method?: unknown }).method === 'notifications/cancelled') cancellations.push(event.message) },
    })
    http = streamableHttp()
    await server.listen(http)
  })
  afterAll(async () => { await server.close() })

  it('runs tools, progress, sampling and elicitation over Streamable HTTP', async () => {
    const client = officialClient()
    await client.connect(new StreamableHTTPClientTransport(new URL(http.url!)))
    expect(await client.callTool({ name: 'echo', arguments: { text: 'streamable' } })).toEqual({ content: [{ type: 'text', text: 'streamable' }] })
    const progress: number[] = []
    await client.callTool({ name: 'long_running', arguments: { steps: 3, ms: 5 } }, undefined, { onprogress: p => { progress.push(p.progress) } })
    expect(progress).toEqual([1, 2, 3])
    expect((await client.callTool({ name: 'sample', arguments: { prompt: 'q' } })).content).toEqual([{ type: 'text', text: 'official-model: sampled over http' }])
    expect((await client.callTool({ name: 'elicit' })).structuredContent).toEqual({ action: 'accept', content: { name: 'Http' } })
    await client.close()
  })

  it('cancels through an AbortSignal', async () => {
    const client = officialClient()
    await client.connect(new StreamableHTTPClientTransport(new URL(http.url!)))
    const controller = new AbortController()
    const before = cancellations.items.length
    // Aborted once its first progress arrives: the call is surely in flight on the server then.
    const call = client.callTool({ name: 'long_running', arguments: { steps: 200, ms: 10 } }, undefined, { signal: controller.signal, onprogress: () => controller.abort() })
    await expect(call).rejects.toThrow()
    // The server forgets the request once it has read the cancellation (a POST of its own).
    await cancellations.when(items => items.length > before)
    for (const session of server.sessions) expect(session.connection.incoming.size).toBe(0)
    expect(await client.callTool({ name: 'echo', arguments: { text: 'after' } })).toEqual({ content: [{ type: 'text', text: 'after' }] })
    await client.close()
  })

  it('resumes after the client drops the stream mid-request, with no message lost or duplicated', async () => {
    // A fetch that cuts the first tools/call answer stream after its second SSE event.
    let isCut = false
    const cuttingFetch: typeof fetch = async (input, init) => {
      const response = await fetch(input, init)
      const body = typeof init?.body === 'string' ? init.body : ''
      if (isCut || !body.includes('"long_running"') || response.body === null) return response
      isCut = true
      let events = 0
      const reader = response.body.getReader()
      const cut = new ReadableStream<Uint8Array>({
        async pull(controller) {
          const { done, value } = await reader.read()
          if (done) return controller.close()
          controller.enqueue(value)
          events += new TextDecoder().decode(value).split('\n\n').length - 1
          if (events >= 2) { void reader.cancel(); controller.error(new Error('network dropped')) }
        },
      })
      return new Response(cut, { status: response.status, headers: response.headers })
    }
    const client = officialClient()
    await client.connect(new StreamableHTTPClientTransport(new URL(http.url!), { fetch: cuttingFetch, reconnectionOptions: { initialReconnectionDelay: 50, maxReconnectionDelay: 200, reconnectionDelayGrowFactor: 1.5, maxRetries: 5 } }))
    const progress: number[] = []
    const result = await client.callTool({ name: 'long_running', arguments: { steps: 8, ms: 30 } }, undefined, { onprogress: p => { progress.push(p.progress) } })
    expect(isCut).toBe(true)
    expect(result.content).toEqual([{ type: 'text', text: 'Finished 8 steps' }])
    expect(progress).toEqual([1, 2, 3, 4, 5, 6, 7, 8])
    await client.close()
  }, 20_000)

  it('talks to the legacy SSE endpoint with the official SSEClientTransport', async () => {
    const client = officialClient()
    const transport = new SSEClientTransport(new URL(http.url!.replace('/mcp', '/sse')))
    await client.connect(transport)
    const wire = recordWire(transport)
    expect(await client.callTool({ name: 'echo', arguments: { text: 'legacy' } })).toEqual({ content: [{ type: 'text', text: 'legacy' }] })
    const progress: number[] = []
    await client.callTool({ name: 'long_running', arguments: { steps: 2, ms: 5 } }, undefined, { onprogress: p => { progress.push(p.progress) } })
    // What rxmcp guarantees: every progress is written on the stream before the result. The SDK's
    // EventSource dispatches a chunk's events at once, so it may drop the last progress: a prefix.
    expect(progressOfLastAnswer(wire)).toEqual({ before: [1, 2], after: 0 })
    expect(progress).toEqual([1, 2].slice(0, progress.length))
    expect((await client.callTool({ name: 'sample', arguments: { prompt: 'q' } })).content).toEqual([{ type: 'text', text: 'official-model: sampled over http' }])
    await client.close()
  })
})

describe('rxmcp HTTP clients against official SDK HTTP servers', () => {
  let official: { process: ChildProcess; url: string }
  beforeAll(async () => { official = await child(['--import', 'tsx', `${fixtures}official-http-server.ts`]) }, 30_000)
  afterAll(() => { official?.process.kill() })

  it.each([
    ['Streamable HTTP', () => streamableHttpClient(`${official.url}/mcp`)],
    ['legacy SSE', () => sseClient(`${official.url}/sse`)],
  ])('runs tools, progress and sampling over %s', async (_name, transport) => {
    const client = await connect(transport(), { name: 'rx', version: '1' }, { sampling: () => ({ role: 'assistant', model: 'rx', content: { type: 'text', text: 'from rxmcp' } }) })
    expect(client.serverInfo.name).toBe('official-http')
    expect(await client.callTool('echo', { text: 'x' })).toEqual({ content: [{ type: 'text', text: 'x' }] })
    const progress: number[] = []
    expect(await client.callTool('slow', { steps: 3 }, { onProgress: p => progress.push(p.progress) })).toEqual({ content: [{ type: 'text', text: 'done 3' }] })
    expect(progress).toEqual([1, 2, 3])
    expect(await client.callTool('ask')).toEqual({ content: [{ type: 'text', text: '{"type":"text","text":"from rxmcp"}' }] })
    await client.close()
  }, 20_000)

  it('falls back to legacy SSE when the server refuses the Streamable HTTP POST', async () => {
    const transport = httpClient(`${official.url}/sse`)
    const client = await connect(transport, { name: 'rx', version: '1' })
    expect(transport.mode).toBe('sse')
    expect(await client.callTool('echo', { text: 'fallback' })).toEqual({ content: [{ type: 'text', text: 'fallback' }] })
    await client.close()
  }, 20_000)
})

describe('rxmcp HTTP clients against @modelcontextprotocol/server-everything', () => {
  const bin = require.resolve('@modelcontextprotocol/server-everything/dist/index.js')

  it.each([
    ['streamableHttp', (url: string) => streamableHttpClient(`${url}/mcp`)],
    ['sse', (url: string) => sseClient(`${url}/sse`)],
  ])('lists and calls its tools over %s', async (mode, transport) => {
    // A port the system just gave out, not a random one that may be taken.
    const port = String(await freeLoopbackPort())
    const peer = await child(['--import', `${fixtures}loopback-only.mjs`, bin, mode], { PORT: port }, /(?:listening on|running on) port (\d+)/i)
    try {
      const client = await connect(transport(`http://127.0.0.1:${peer.url}`), { name: 'rx', version: '1' })
      const tools = await lastValueFrom(client.tools().pipe(toArray()))
      expect(tools.map(tool => tool.name)).toContain('echo')
      expect(await client.callTool('echo', { message: mode })).toEqual({ content: [{ type: 'text', text: `Echo: ${mode}` }] })
      const progress: number[] = []
      await client.callTool('trigger-long-running-operation', { duration: 0.2, steps: 2 }, { onProgress: p => progress.push(p.progress) })
      expect(progress).toEqual([1, 2])
      await client.close()
    } finally {
      peer.process.kill()
    }
  }, 30_000)
})
