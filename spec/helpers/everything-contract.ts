/**
 * The everything server's contract as the official SDK clients see it over Streamable HTTP, one
 * table for every place the server runs (node:http, the web handler behind Express, Fastify and
 * Hono, Deno, workerd, Node without code generation): tools across pages, a call, structured
 * content, progress, a resource, a prompt, sampling and elicitation; in the legacy era with the SDK
 * v1 client (`@modelcontextprotocol/sdk` 1.32, a session) and in the modern era with the SDK v2
 * client (`@modelcontextprotocol/client` 2.4 pinned to 2026-07-28: no session, input_required
 * rounds). Progress is asserted on the client's wire (what rxmcp sends), not on the SDK's
 * callbacks, whose timing is the SDK's affair.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport as HttpTransportV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { CreateMessageRequestSchema, ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js'
import { Client as ClientV2, StreamableHTTPClientTransport as HttpTransportV2 } from '@modelcontextprotocol/client'

/** A JSON-RPC message as either SDK's transport carries it. */
type Message = { jsonrpc: '2.0'; id?: string | number; method?: string; params?: Record<string, any>; result?: Record<string, any> }

/** What one SDK transport sent and received, in order. */
interface Wire { sent: Message[]; received: Message[] }

/** The parts of both SDKs' transports the recording wraps. */
interface RecordableTransport {
  send(message: any, options?: any): Promise<void>
  onmessage?: ((message: any, extra?: any) => void) | undefined
}

/**
 * Records what an SDK client sends and receives on `transport` (the instance is kept, so the SDK
 * still recognizes its own transport classes): `send` wrapped, and `onmessage` wrapped whenever the
 * client sets it. Either SDK's transports, with the wire typed as the caller reads it.
 */
export function recorded<T extends RecordableTransport, M = Message>(transport: T, wire: { sent: M[]; received: M[] }): T {
  const send = transport.send.bind(transport)
  transport.send = (message, options) => { wire.sent.push(message); return send(message, options) }
  // The handler the client set; the transport calls the recording wrapper instead.
  let handler: RecordableTransport['onmessage']
  Object.defineProperty(transport, 'onmessage', {
    configurable: true,
    get: () => handler === undefined ? undefined : (message: M, extra?: unknown) => { wire.received.push(message); handler!(message, extra) },
    set: (value: RecordableTransport['onmessage']) => { handler = value },
  })
  return transport
}

// `object`: SDK v1's callTool may also be typed as the old `toolResult` shape, which has no `content`.
const text = (result: object) => (((result as { content?: unknown }).content as { type: string; text?: string }[])[0]!).text

/** Every page of a list the SDK client fetches one page at a time. */
async function walk(page: (cursor?: string) => Promise<{ nextCursor?: string } & Record<string, unknown>>, key: string): Promise<unknown[]> {
  const items: unknown[] = []
  let cursor: string | undefined
  for (let pages = 0; pages < 50; pages++) {
    const result = await page(cursor)
    items.push(...(result[key] as unknown[]))
    cursor = result.nextCursor
    if (cursor === undefined) break
  }
  return items
}

/** The progress reports on the wire for the last `tools/call` sent, up to its result. */
function progressOfLastCall(wire: Wire, from: number): number[] {
  const call = wire.sent.filter(message => message.method === 'tools/call').at(-1)!
  const token = call.params!._meta?.progressToken
  const arrived = wire.received.slice(from)
  const resultAt = arrived.findIndex(message => message.id === call.id && 'result' in message)
  expect(resultAt).toBeGreaterThanOrEqual(0)
  return arrived.slice(0, resultAt)
    .filter(message => message.method === 'notifications/progress' && message.params!.progressToken === token)
    .map(message => message.params!.progress as number)
}

/** What both SDK clients offer for the era-free checks, with the same call shapes. */
interface CommonClient {
  listTools(params?: { cursor?: string }): Promise<{ nextCursor?: string } & Record<string, unknown>>
  callTool(params: { name: string; arguments: Record<string, unknown> }): Promise<object>
  readResource(params: { uri: string }): Promise<{ contents: unknown[] }>
  getPrompt(params: { name: string; arguments: Record<string, string> }): Promise<{ messages: { content: unknown }[] }>
}

/** The checks that read the same in both eras: tools across pages, echo and add, a resource, a prompt. */
function describeToolsAndReads(client: () => CommonClient): void {
  it('lists every tool across pages and calls echo and add', async () => {
    expect(await walk(cursor => client().listTools({ cursor }), 'tools')).toHaveLength(10)
    expect(text(await client().callTool({ name: 'echo', arguments: { text: 'hi' } }))).toBe('hi')
    expect(((await client().callTool({ name: 'add', arguments: { a: 2, b: 3 } })) as { structuredContent?: unknown }).structuredContent).toEqual({ sum: 5 })
  })

  it('reads a resource and gets a prompt', async () => {
    expect((await client().readResource({ uri: 'everything://items/7' })).contents[0]).toMatchObject({ text: '{"id":"7","name":"Item 7"}' })
    expect((await client().getPrompt({ name: 'greeting', arguments: { name: 'Grace' } })).messages[0]!.content).toEqual({ type: 'text', text: 'Say hello to Grace' })
  })
}

/** Options of {@link describeEverythingContract}. */
export interface ContractOptions {
  /** Which eras to drive (default both). */
  eras?: readonly ('legacy' | 'modern')[]
  /** Headers every request carries (a Host the server allows, a token). */
  headers?: Record<string, string>
}

/**
 * Declares the contract's tests against the everything server at the URL `url()` gives once the
 * caller's `beforeAll` has started it (declare this after that `beforeAll`).
 */
export function describeEverythingContract(where: string, url: () => URL, options: ContractOptions = {}): void {
  const eras = options.eras ?? ['legacy', 'modern']
  const requestInit = options.headers === undefined ? undefined : { headers: options.headers }

  if (eras.includes('legacy')) {
    describe(`the official SDK v1 client (legacy era) against the everything server ${where}`, () => {
      let client: ClientV1
      let transport: HttpTransportV1
      const wire: Wire = { sent: [], received: [] }
      beforeAll(async () => {
        client = new ClientV1({ name: 'sdk-v1', version: '1.32.2' }, { capabilities: { sampling: {}, elicitation: {} } })
        client.setRequestHandler(CreateMessageRequestSchema, async () => ({ role: 'assistant', model: 'v1-model', content: { type: 'text', text: 'forty-two' } }))
        client.setRequestHandler(ElicitRequestSchema, async () => ({ action: 'accept', content: { name: 'Grace', age: 36, color: 'green', extras: [] } }))
        transport = recorded(new HttpTransportV1(url(), requestInit === undefined ? {} : { requestInit }), wire)
        await client.connect(transport)
      }, 60_000)
      afterAll(async () => {
        await transport?.terminateSession().catch(() => undefined)
        await client?.close()
      })

      it('initializes a session with the server', () => {
        expect(client.getServerVersion()).toMatchObject({ name: 'rxmcp-everything' })
        expect(transport.sessionId).toMatch(/^[\w-]{16,}$/)
      })

      describeToolsAndReads(() => client as unknown as CommonClient)

      it('streams progress before the result', async () => {
        const from = wire.received.length
        await client.callTool({ name: 'long_running', arguments: { steps: 3, ms: 1 } }, undefined, { onprogress: () => {} })
        expect(progressOfLastCall(wire, from)).toEqual([1, 2, 3])
      })


      it('asks the client for sampling and elicitation', async () => {
        expect(text(await client.callTool({ name: 'sample', arguments: { prompt: 'meaning?' } }))).toBe('v1-model: forty-two')
        expect((await client.callTool({ name: 'elicit', arguments: {} })).structuredContent).toEqual({ action: 'accept', content: { name: 'Grace', age: 36, color: 'green', extras: [] } })
      })
    })
  }

  if (eras.includes('modern')) {
    describe(`the official SDK v2 client (2026-07-28) against the everything server ${where}`, () => {
      let client: ClientV2
      const wire: Wire = { sent: [], received: [] }
      beforeAll(async () => {
        client = new ClientV2({ name: 'sdk-v2', version: '2.4.0' }, {
          capabilities: { elicitation: { form: {} }, sampling: {} },
          versionNegotiation: { mode: { pin: '2026-07-28' } },
        })
        client.setRequestHandler('sampling/createMessage', async () => ({ role: 'assistant', model: 'v2-model', content: { type: 'text', text: 'forty-two' } }))
        client.setRequestHandler('elicitation/create', async () => ({ action: 'accept', content: { name: 'Ada', age: 36, color: 'red', extras: [] } }))
        await client.connect(recorded(new HttpTransportV2(url(), requestInit === undefined ? {} : { requestInit }), wire))
      }, 60_000)
      afterAll(async () => { await client?.close() })

      it('negotiates the modern era without a session', () => {
        expect(client.getProtocolEra()).toBe('modern')
        expect(client.getServerVersion()).toMatchObject({ name: 'rxmcp-everything' })
        expect(wire.sent.some(message => message.method === 'initialize')).toBe(false)
      })

      describeToolsAndReads(() => client as unknown as CommonClient)


      it('streams progress before the result', async () => {
        const from = wire.received.length
        await client.callTool({ name: 'long_running', arguments: { steps: 3, ms: 1 } }, { onprogress: () => {} })
        expect(progressOfLastCall(wire, from)).toEqual([1, 2, 3])
      })


      it('answers sampling and elicitation as input_required rounds', async () => {
        expect(text(await client.callTool({ name: 'sample', arguments: { prompt: 'meaning?' } }))).toBe('v2-model: forty-two')
        expect((await client.callTool({ name: 'elicit', arguments: {} })).structuredContent).toEqual({ action: 'accept', content: { name: 'Ada', age: 36, color: 'red', extras: [] } })
        const rounds = wire.received.filter(message => message.result?.resultType === 'input_required')
        expect(rounds.map(message => Object.values(message.result!.inputRequests as Record<string, { method: string }>)[0]!.method)).toEqual(['sampling/createMessage', 'elicitation/create'])
      })
    })
  }
}
