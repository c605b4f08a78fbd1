/**
 * The official SDK v2 client (`@modelcontextprotocol/client` 2.4) against the rxmcp server, over
 * real transports: Streamable HTTP (our listener on 127.0.0.1) and stdio (our server in a child
 * the SDK spawns). In its modern mode (`versionNegotiation: { mode: { pin: '2026-07-28' } }`) the
 * client probes with server/discover, sends `_meta` on every request, fulfils `input_required`
 * rounds with its elicitation and sampling handlers and retries, and opens subscriptions/listen;
 * in its default legacy mode it initializes as a 2025 client.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { readFileSync, readdirSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { Client, ProtocolError, StreamableHTTPClientTransport, type JSONRPCMessage, type Transport } from '@modelcontextprotocol/client'
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio'
import { streamableHttp } from '../../transports/streamable-http.ts'
import { createInteropTarget } from './fixtures/sdk-v2-client-target.ts'
import { recorded } from '../helpers/everything-contract.ts'

const root = fileURLToPath(new URL('../..', import.meta.url))
const target = fileURLToPath(new URL('./fixtures/sdk-v2-client-target.ts', import.meta.url))
const INFO = { name: 'sdk-v2-client', version: '2.4.0' }
const MODERN = '2026-07-28'
/** How long a condition may take to come true before the test fails. */
const WAIT_MS = 10_000

const text = (result: { content?: unknown }) => ((result.content as { type: string; text?: string }[])[0]!).text

/** The SDK v2 client with the handlers our server's input requests reach (live requests or MRTR rounds). */
function sdkClient(mode: 'modern' | 'legacy'): Client {
  const client = new Client(INFO, {
    capabilities: { elicitation: { form: {} }, sampling: {} },
    ...(mode === 'modern' ? { versionNegotiation: { mode: { pin: MODERN } } } : {}),
  })
  client.setRequestHandler('elicitation/create', async request => ({ action: 'accept', content: { name: `Ada (asked "${request.params.message}")` } }))
  client.setRequestHandler('sampling/createMessage', async request => ({
    role: 'assistant', model: 'sdk-v2-model', content: { type: 'text', text: `hi in ${request.params.maxTokens} tokens` },
  }))
  return client
}

/** Resolves when `condition` holds, checked on each call of the returned `check`; fails after WAIT_MS. */
function waitFor(condition: () => boolean, what: string): { check(): void; done: Promise<void> } {
  let resolve!: () => void
  let timer: NodeJS.Timeout | undefined
  const done = new Promise<void>((ok, fail) => {
    resolve = ok
    timer = setTimeout(() => fail(new Error(`timed out waiting for ${what}`)), WAIT_MS)
  }).finally(() => clearTimeout(timer))
  const check = () => { if (condition()) resolve() }
  return { check, done }
}

/** Every message a transport carried, both ways, in order. */
interface Wire { sent: JSONRPCMessage[]; received: JSONRPCMessage[] }

/** The requests of a method the client sent, and the results it received for them. */
function exchanges(wire: Wire, method: string) {
  const requests = wire.sent.filter((message): message is JSONRPCMessage & { id: number | string; method: string; params?: Record<string, any> } =>
    'method' in message && 'id' in message && message.method === method)
  const results = requests.map(request => wire.received.find(message => 'id' in message && message.id === request.id && 'result' in message) as { result: Record<string, any> } | undefined)
  return { requests, results }
}

/** Live children of this process running the stdio fixture (the SDK's own and any probe sibling). */
function fixtureChildren(): number[] {
  const pids: number[] = []
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8')
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
      if (Number(fields[1]) !== process.pid || fields[0] === 'Z') continue
      if (readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes(target)) pids.push(Number(entry))
    } catch {
      // Gone while we looked.
    }
  }
  return pids
}

/** The same checks over each transport, the client in its modern mode. */
function modernAgainstRxmcp(name: string, open: () => Promise<Transport>) {
  describe(`the official SDK v2 client (modern, pinned ${MODERN}) against the rxmcp server over ${name}`, () => {
    let client: Client
    const wire: Wire = { sent: [], received: [] }
    beforeAll(async () => {
      client = sdkClient('modern')
      await client.connect(recorded(await open(), wire))
    }, 30_000)
    afterAll(async () => { await client?.close() })

    it('negotiates the modern era through server/discover', () => {
      expect(client.getProtocolEra()).toBe('modern')
      expect(client.getNegotiatedProtocolVersion()).toBe(MODERN)
      expect(client.getServerVersion()).toMatchObject({ name: 'rxmcp-interop-target', version: '1.0.0' })
      expect(client.getServerCapabilities()).toMatchObject({ tools: {}, resources: {}, prompts: {} })
    })

    it('lists tools and calls one, every request carrying the modern _meta and no session', async () => {
      const { tools } = await client.listTools()
      expect(tools.map(tool => tool.name)).toEqual(expect.arrayContaining(['echo', 'count', 'ask', 'sample', 'ask_both', 'grow']))
      expect(text(await client.callTool({ name: 'echo', arguments: { text: 'across SDKs' } }))).toBe('across SDKs')
      const { requests, results } = exchanges(wire, 'tools/call')
      expect(requests.at(-1)!.params!._meta).toMatchObject({ 'io.modelcontextprotocol/protocolVersion': MODERN, 'io.modelcontextprotocol/clientCapabilities': { elicitation: { form: {} }, sampling: {} } })
      expect(results.at(-1)!.result.resultType).toBe('complete')
      expect(wire.sent.some(message => 'method' in message && message.method === 'initialize')).toBe(false)
    })

    it('receives progress notifications before the result of a tools/call', async () => {
      const progress: { progress: number; total?: number; message?: string }[] = []
      const before = wire.received.length
      const result = await client.callTool({ name: 'count', arguments: { to: 3 } }, { onprogress: event => { progress.push(event) } })
      expect(text(result)).toBe('counted to 3')
      // What rxmcp guarantees, read on the client's wire: the three reports, in order, each with the
      // call's token, and then the result. (How many reach onprogress is the SDK client's affair:
      // it hands progress on a turn late and drops what comes after the result was handled, which
      // on a loaded machine can be all of it when one read carries everything.)
      const token = exchanges(wire, 'tools/call').requests.at(-1)!.params!._meta.progressToken
      const arrived = wire.received.slice(before)
      const reports = arrived.filter(message => 'method' in message && message.method === 'notifications/progress').map(message => (message as { params: Record<string, unknown> }).params)
      expect(reports).toEqual([1, 2, 3].map(step => ({ progressToken: token, progress: step, total: 3, message: `step ${step}` })))
      const resultAt = arrived.findIndex(message => 'result' in message)
      expect(arrived.slice(0, resultAt).filter(message => 'method' in message && message.method === 'notifications/progress')).toHaveLength(3)
      // Whatever the client handed on came in order.
      expect(progress).toEqual([1, 2, 3].slice(0, progress.length).map(step => ({ progress: step, total: 3, message: `step ${step}` })))
    })

    it('answers an elicitation input request (MRTR) with its handler and retries', async () => {
      const before = exchanges(wire, 'tools/call').requests.length
      expect(text(await client.callTool({ name: 'ask', arguments: {} }))).toBe('Hello, Ada (asked "Your name?")')
      // Two rounds on the wire: input_required with a sealed requestState, then the retry that echoes it.
      const { requests, results } = exchanges(wire, 'tools/call')
      const [first, retry] = requests.slice(before)
      const [asked, answered] = results.slice(before)
      expect(asked!.result).toMatchObject({ resultType: 'input_required', inputRequests: { 'elicitation-1': { method: 'elicitation/create' } } })
      expect(typeof asked!.result.requestState).toBe('string')
      expect(retry!.id).not.toBe(first!.id)
      expect(retry!.params).toMatchObject({ name: 'ask', requestState: asked!.result.requestState, inputResponses: { 'elicitation-1': { action: 'accept' } } })
      expect(answered!.result.resultType).toBe('complete')
      // No server-to-client request in the modern era.
      expect(wire.received.some(message => 'method' in message && 'id' in message)).toBe(false)
    })

    it('answers a sampling input request (MRTR) with its handler and retries', async () => {
      expect(text(await client.callTool({ name: 'sample', arguments: {} }))).toBe('model sdk-v2-model said hi in 16 tokens')
    })

    it('answers two input requests of one round together', async () => {
      const before = exchanges(wire, 'tools/call').requests.length
      expect(text(await client.callTool({ name: 'ask_both', arguments: {} }))).toBe('Ada (asked "Your name?") and sdk-v2-model')
      const { requests } = exchanges(wire, 'tools/call')
      expect(requests.slice(before)).toHaveLength(2)
      expect(Object.keys(requests.at(-1)!.params!.inputResponses).sort()).toEqual(['elicitation-1', 'sampling-1'])
    })

    it('listens (subscriptions/listen) and receives a tools list_changed after a tool is added', async () => {
      let changes = 0
      const changed = waitFor(() => changes > 0, 'notifications/tools/list_changed')
      client.setNotificationHandler('notifications/tools/list_changed', () => { changes++; changed.check() })
      const subscription = await client.listen({ toolsListChanged: true })
      try {
        expect(subscription.honoredFilter).toMatchObject({ toolsListChanged: true })
        const added = text(await client.callTool({ name: 'grow', arguments: {} }))
        await changed.done
        // The new tool is there on the next list, and callable.
        expect((await client.listTools(undefined, { cacheMode: 'refresh' })).tools.map(tool => tool.name)).toContain(added)
        expect(text(await client.callTool({ name: added!, arguments: {} }))).toBe(added)
      } finally {
        await subscription.close()
      }
      expect(await subscription.closed).toBe('local')
    })

    it('reads a resource', async () => {
      const result = await client.readResource({ uri: 'interop://greeting' })
      expect(result.contents).toEqual([{ uri: 'interop://greeting', mimeType: 'text/plain', text: 'Hello from rxmcp' }])
    })

    it('gets a prompt', async () => {
      const result = await client.getPrompt({ name: 'greet', arguments: { name: 'Grace' } })
      expect(result.messages).toEqual([{ role: 'user', content: { type: 'text', text: 'Please greet Grace.' } }])
    })

    it('gets -32602 for an unknown tool', async () => {
      const error = await client.callTool({ name: 'no_such_tool', arguments: {} }).then(() => undefined, (failure: unknown) => failure)
      expect(error).toBeInstanceOf(ProtocolError)
      expect((error as ProtocolError).code).toBe(-32602)
    })
  })
}

const http = streamableHttp({ host: '127.0.0.1', port: 0 })
const httpServer = createInteropTarget()
beforeAll(async () => { await httpServer.listen(http) })
afterAll(async () => {
  await httpServer.close()
  for (const pid of fixtureChildren()) try { process.kill(pid, 'SIGKILL') } catch { /* gone */ }
})

const stdioTransport = () => new StdioClientTransport({ command: process.execPath, args: ['--import', 'tsx', target], cwd: root, stderr: 'inherit' })

modernAgainstRxmcp('Streamable HTTP', async () => new StreamableHTTPClientTransport(new URL(http.url!)))
modernAgainstRxmcp('stdio', async () => stdioTransport())

describe('the official SDK v2 client in its default legacy mode against the rxmcp server', () => {
  it('initializes over Streamable HTTP and calls a tool that elicits (a live server-to-client request)', async () => {
    const client = sdkClient('legacy')
    const wire: Wire = { sent: [], received: [] }
    try {
      await client.connect(recorded(new StreamableHTTPClientTransport(new URL(http.url!)), wire))
      expect(client.getProtocolEra()).toBe('legacy')
      expect(client.getNegotiatedProtocolVersion()).toBe('2025-11-25')
      expect(client.getServerVersion()).toMatchObject({ name: 'rxmcp-interop-target' })
      expect(text(await client.callTool({ name: 'echo', arguments: { text: 'old school' } }))).toBe('old school')
      expect(text(await client.callTool({ name: 'ask', arguments: {} }))).toBe('Hello, Ada (asked "Your name?")')
      expect(wire.received.some(message => 'method' in message && 'id' in message && message.method === 'elicitation/create')).toBe(true)
      expect(wire.sent.some(message => 'params' in message && message.params?._meta !== undefined && 'io.modelcontextprotocol/protocolVersion' in message.params._meta)).toBe(false)
    } finally {
      await client.close()
    }
  })

  it('initializes over stdio and calls a tool that samples', async () => {
    const client = sdkClient('legacy')
    try {
      await client.connect(stdioTransport())
      expect(client.getProtocolEra()).toBe('legacy')
      expect(client.getNegotiatedProtocolVersion()).toBe('2025-11-25')
      expect(text(await client.callTool({ name: 'sample', arguments: {} }))).toBe('model sdk-v2-model said hi in 16 tokens')
    } finally {
      await client.close()
    }
  }, 30_000)
})
