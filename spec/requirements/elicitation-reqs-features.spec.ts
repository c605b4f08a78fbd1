import { afterEach, describe, expect } from 'vitest'
import { firstValueFrom, lastValueFrom } from 'rxjs'
import { verifies } from '../helpers/verifies.ts'
import { createServer, type McpServer } from '../../actors/server.ts'
import { connect, type ClientOptions, type McpClient } from '../../actors/client.ts'
import { createConnection, type Connection } from '../../lib/connection.ts'
import { createMemoryPair } from '../../transports/memory.ts'
import { streamableHttp } from '../../transports/streamable-http.ts'
import { streamableHttpClient } from '../../transports/http-client.ts'
import { resultOf } from '../../lib/operators/progress.ts'
import type { JsonObject } from '../../lib/jsonrpc/message.ts'
import { ErrorCode, McpError, UrlElicitationRequiredError, type UrlElicitationRequiredData } from '../../lib/jsonrpc/errors.ts'
import type { ElicitParams, Root } from '../../lib/schema/types.ts'

/**
 * URL-mode elicitation (MCP 2025-11-25 and 2026-07-28 client/elicitation) and roots
 * (client/roots), each side of rxmcp: the server asks a URL elicitation only with mode "url", a
 * message, a valid url and an elicitationId, and its -32042 always lists such elicitations; the
 * client hears a completion once per elicitation it was given, compares ids as the exact strings
 * the server sent, and never holds a root that is not a file:// URI (nor does a server take one).
 */

let cleanups: Array<() => Promise<unknown>> = []
afterEach(async () => { for (const cleanup of cleanups.reverse()) await cleanup(); cleanups = [] })

const URL_ELICITATION = { mode: 'url', message: 'Connect your account', url: 'https://accounts.example/connect?session=1', elicitationId: 'e-1' } as const

/** URL elicitations a handler might write, and what is wrong with each (undefined: nothing). */
const URL_CASES: Record<string, { params: JsonObject; says?: RegExp }> = {
  valid: { params: URL_ELICITATION },
  'no elicitationId': { params: { mode: 'url', message: 'm', url: 'https://accounts.example/connect' }, says: /elicitationId/ },
  'an url that is not one': { params: { mode: 'url', message: 'm', url: 'accounts.example/connect', elicitationId: 'e-2' }, says: /valid URL/ },
  'no message': { params: { mode: 'url', url: 'https://accounts.example/connect', elicitationId: 'e-3' }, says: /message/ },
}

/** An rxmcp server over real Streamable HTTP whose tool `ask` elicits the URL case its `case` argument names, and says what came of it. */
async function elicitingServer(): Promise<string> {
  const server: McpServer = createServer({ name: 'eliciting', version: '1' })
  server.tool('ask', { inputSchema: { type: 'object', properties: { case: { type: 'string' } } } }, async ({ case: name }, ctx) => {
    try {
      const answer = await ctx.elicit(URL_CASES[name as string]!.params as unknown as ElicitParams)
      return { content: [{ type: 'text', text: `answered ${answer.action}` }] }
    } catch (error) {
      return { content: [{ type: 'text', text: `${(error as Error).name}: ${(error as Error).message}` }] }
    }
  })
  const http = streamableHttp()
  await server.listen(http)
  cleanups.push(() => server.close())
  return http.url!
}

/** A modern-era (2026-07-28) tools/call POSTed as a client writes it, the answer read as JSON. */
async function modernCall(url: string, id: number, params: JsonObject, capabilities: JsonObject): Promise<{ result?: JsonObject; error?: { code: number; message: string } }> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call', 'mcp-name': String(params.name) },
    body: JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { ...params, _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': capabilities } } }),
  })
  const text = await response.text()
  const data = text.startsWith('{') ? text : text.split('\n').find(line => line.startsWith('data:'))!.slice(5)
  return JSON.parse(data)
}

/** The rxmcp client (legacy era) of a raw JSON-RPC server over a memory pair: the server sends what the test writes. */
async function clientOfRawServer(options: ClientOptions, onToolCall?: () => unknown): Promise<{ client: McpClient; server: Connection; ask: (method: string, params?: JsonObject) => Promise<JsonObject> }> {
  const [near, far] = createMemoryPair()
  const server: Connection = createConnection(far)
  server.setRequestHandler('initialize', () => ({ protocolVersion: '2025-11-25', capabilities: { tools: {} }, serverInfo: { name: 'raw', version: '1' } }))
  server.setRequestHandler('tools/call', () => onToolCall?.() ?? { content: [] })
  server.start()
  const client = await connect(near, { name: 'spec', version: '1' }, { era: 'legacy', ...options })
  cleanups.push(() => server.close(), () => client.close())
  return { client, server, ask: (method, params) => firstValueFrom(server.request(method, params, { progress: false, timeout: 0 }).pipe(resultOf())) }
}

describe('URL elicitation requests (server)', () => {
  verifies('elicitation:url-params', 'ctx.elicit sends a URL elicitation with its mode, message, url and elicitationId as given, and refuses one missing any (legacy, over HTTP)', async () => {
    const url = await elicitingServer()
    const asked: JsonObject[] = []
    const client = await connect(streamableHttpClient(url), { name: 'spec', version: '1' }, {
      era: 'legacy', elicitation: { url: params => { asked.push(params as unknown as JsonObject); return { action: 'accept' } } },
    })
    cleanups.push(() => client.close())
    for (const [name, { says }] of Object.entries(URL_CASES)) {
      const answer = ((await client.callTool('ask', { case: name })).content[0] as { text: string }).text
      if (says === undefined) expect(answer, name).toBe('answered accept')
      else {
        expect(answer, name).toMatch(/^TypeError: Cannot send elicitation\/create: /)
        expect(answer, name).toMatch(says)
      }
    }
    // Only the valid one reached the client, exactly as the handler wrote it.
    expect(asked).toEqual([URL_ELICITATION])
  })

  verifies('elicitation:url-params@2026-07-28', 'an input_required round carries a URL elicitation with its mode, message, url and elicitationId, and never one missing any (over HTTP)', async () => {
    const url = await elicitingServer()
    const capabilities = { elicitation: { url: {} } }
    const first = await modernCall(url, 1, { name: 'ask', arguments: { case: 'valid' } }, capabilities)
    expect(first.result).toMatchObject({ resultType: 'input_required', inputRequests: { 'elicitation-1': { method: 'elicitation/create', params: URL_ELICITATION } } })
    for (const [name, { says }] of Object.entries(URL_CASES)) {
      if (says === undefined) continue
      const answer = await modernCall(url, 2, { name: 'ask', arguments: { case: name } }, capabilities)
      expect(answer.result?.resultType, name).toBe('complete')
      expect(answer.result?.inputRequests, name).toBeUndefined()
      const text = ((answer.result?.content as JsonObject[])[0] as { text: string }).text
      expect(text, name).toMatch(/^TypeError: Cannot ask elicitation\/create: /)
      expect(text, name).toMatch(says)
    }
  })

  verifies('elicitation:url-required-error-data', 'a -32042 always lists complete URL elicitations: the error cannot be made without them, and a handler that tries is answered -32603, not -32042 (over HTTP)', async () => {
    // The error refuses to exist without its list: no data, an empty list, an elicitation without id or in form mode.
    for (const data of [undefined, {}, { elicitations: [] }, { elicitations: [{ ...URL_ELICITATION, elicitationId: undefined }] }, { elicitations: [{ ...URL_ELICITATION, mode: 'form' }] }]) {
      expect(() => new UrlElicitationRequiredError('Connect first', data as unknown as UrlElicitationRequiredData), JSON.stringify(data)).toThrow(TypeError)
    }
    // A peer's -32042 without the list is no URLElicitationRequiredError: kept as the plain error it is.
    const malformed = McpError.from({ code: -32042, message: 'Connect first', data: { elicitations: [{ mode: 'url', url: 'https://x.example' }] } })
    expect(malformed.constructor).toBe(McpError)
    expect(malformed.code).toBe(-32042)
    expect(McpError.from({ code: -32042, message: 'Connect first', data: { elicitations: [URL_ELICITATION] } })).toBeInstanceOf(UrlElicitationRequiredError)

    const server = createServer({ name: 'connect', version: '1' })
    server.method('acme/sync', params => {
      throw new UrlElicitationRequiredError('Connect first', (params?.complete === true ? { elicitations: [URL_ELICITATION] } : { elicitations: [] }) as unknown as UrlElicitationRequiredData)
    })
    const http = streamableHttp({ jsonResponse: true })
    await server.listen(http)
    cleanups.push(() => server.close())
    const client = await connect(streamableHttpClient(http.url!), { name: 'spec', version: '1' }, { era: 'legacy', elicitation: { url: () => ({ action: 'accept' }) } })
    cleanups.push(() => client.close())
    const listed = await lastValueFrom(client.request('acme/sync', { complete: true })).catch((error: unknown) => error)
    expect(listed).toBeInstanceOf(UrlElicitationRequiredError)
    expect((listed as McpError).toJSON()).toEqual({ code: -32042, message: 'Connect first', data: { elicitations: [URL_ELICITATION] } })
    const unlisted = await lastValueFrom(client.request('acme/sync', { complete: false })).catch((error: unknown) => error)
    expect(unlisted).toBeInstanceOf(McpError)
    expect((unlisted as McpError).code).toBe(ErrorCode.InternalError)
  })
})

describe('URL elicitation completions (client)', () => {
  verifies('elicitation:unknown-complete', 'hears notifications/elicitation/complete once for each URL elicitation it was given (a request, a -32042), and never for an unknown or completed id', async () => {
    const heard: unknown[] = []
    const { client, server, ask } = await clientOfRawServer({ elicitation: { url: () => ({ action: 'accept' }) } }, () => {
      throw new UrlElicitationRequiredError('Connect first', { elicitations: [{ ...URL_ELICITATION, elicitationId: 'e-2' }] })
    })
    client.notifications('notifications/elicitation/complete').subscribe(params => heard.push(params.elicitationId))
    expect(await ask('elicitation/create', URL_ELICITATION)).toEqual({ action: 'accept' })
    await expect(client.callTool('sync', {})).rejects.toBeInstanceOf(UrlElicitationRequiredError)
    for (const id of ['unknown', 'e-1', 'e-1', 'e-2', 'e-3', 'e-2']) await server.notify('notifications/elicitation/complete', { elicitationId: id })
    // A ping after the notifications: answered once the client has read every one before it.
    await ask('ping')
    expect(heard).toEqual(['e-1', 'e-2'])
  })

  verifies('elicitation:id-opaque', 'takes an elicitationId as the exact string sent: handed to the handler as it is, and only that exact string completes it', async () => {
    const opaque = ' E-1/%2F?x=ü\u00a0'
    const seen: unknown[] = []
    const heard: unknown[] = []
    const { client, server, ask } = await clientOfRawServer({ elicitation: { url: params => { seen.push((params as { elicitationId: string }).elicitationId); return { action: 'accept' } } } })
    client.notifications('notifications/elicitation/complete').subscribe(params => heard.push(params.elicitationId))
    await ask('elicitation/create', { ...URL_ELICITATION, elicitationId: opaque })
    expect(seen).toEqual([opaque])
    // Trimmed, decoded, folded or normalised, it is another id.
    for (const id of [opaque.trim(), decodeURIComponent(opaque), opaque.toLowerCase(), opaque.normalize('NFD'), opaque]) await server.notify('notifications/elicitation/complete', { elicitationId: id })
    await ask('ping')
    expect(heard).toEqual([opaque])
  })
})

describe('roots are file:// URIs', () => {
  const FILE_ROOTS: Root[] = [{ uri: 'file:///home/ada/project', name: 'project' }]

  /** A server whose tool `roots` answers with the client's roots, or the error asking for them gave. */
  function rootsServer(): McpServer {
    const server = createServer({ name: 'roots', version: '1' })
    server.tool('roots', {}, async (_args, ctx) => {
      try {
        return { content: [{ type: 'text', text: JSON.stringify((await ctx.listRoots()).roots) }] }
      } catch (error) {
        return { content: [{ type: 'text', text: `${(error as Error).name}: ${(error as Error).message}` }] }
      }
    })
    return server
  }

  /** The client refuses other roots at connect and in setRoots, and the server gets only its file roots. */
  async function clientKeepsFileRoots(era: 'legacy' | 'modern'): Promise<void> {
    const server = rootsServer()
    const http = streamableHttp()
    await server.listen(http)
    cleanups.push(() => server.close())
    for (const uri of ['https://example.com/project', '/home/ada/project', 'project']) {
      await expect(connect(streamableHttpClient(http.url!), { name: 'spec', version: '1' }, { era, roots: [{ uri }] }), uri).rejects.toThrow(TypeError)
    }
    const client = await connect(streamableHttpClient(http.url!), { name: 'spec', version: '1' }, { era, roots: FILE_ROOTS })
    cleanups.push(() => client.close())
    expect(() => client.setRoots([...FILE_ROOTS, { uri: 'https://example.com/other' }])).toThrow(/roots\[1\]\.uri must be a file:\/\/ URI/)
    const listed = (await client.callTool('roots', {})).content[0] as { text: string }
    expect(JSON.parse(listed.text)).toEqual(FILE_ROOTS)
  }

  verifies('roots:file-uri', 'the client holds and sends only file:// roots (legacy, over HTTP), and a server refuses a roots/list answer with another (-32602)', async () => {
    await clientKeepsFileRoots('legacy')
    // A client that answers with an https root: the handler's ctx.listRoots rejects, and never sees it.
    const server = rootsServer()
    const [near, far] = createMemoryPair()
    await server.listen(far)
    cleanups.push(() => server.close())
    const raw = createConnection(near)
    raw.setRequestHandler('roots/list', () => ({ roots: [{ uri: 'https://example.com/project' }] }))
    raw.start()
    cleanups.push(() => raw.close())
    const call = (method: string, params?: JsonObject) => firstValueFrom(raw.request(method, params, { progress: false }).pipe(resultOf()))
    await call('initialize', { protocolVersion: '2025-11-25', capabilities: { roots: {} }, clientInfo: { name: 'raw', version: '1' } })
    await raw.notify('notifications/initialized')
    const answer = await call('tools/call', { name: 'roots', arguments: {} })
    expect((answer.content as JsonObject[])[0]).toEqual({ type: 'text', text: expect.stringMatching(/^InvalidParamsError: Invalid params: the roots\/list result is not valid: roots\[0\]\.uri must be a file:\/\/ URI/) })
  })

  verifies('roots:file-uri@2026-07-28', 'the client holds and answers only file:// roots (modern, over HTTP), and a server refuses an input response with another (-32602)', async () => {
    await clientKeepsFileRoots('modern')
    const server = rootsServer()
    const http = streamableHttp()
    await server.listen(http)
    cleanups.push(() => server.close())
    const capabilities = { roots: {} }
    const first = await modernCall(http.url!, 1, { name: 'roots', arguments: {} }, capabilities)
    expect(first.result).toMatchObject({ resultType: 'input_required', inputRequests: { 'roots-1': { method: 'roots/list' } } })
    const retry = await modernCall(http.url!, 2, { name: 'roots', arguments: {}, requestState: first.result!.requestState, inputResponses: { 'roots-1': { roots: [{ uri: 'https://example.com/project' }] } } }, capabilities)
    const text = ((retry.result?.content as JsonObject[] | undefined)?.[0] as { text?: string } | undefined)?.text
    expect(text).toMatch(/^InvalidParamsError: Invalid params: inputResponses\.roots-1 is not a valid answer to roots\/list/)
  })
})
