import { afterEach, describe, expect, it } from 'vitest'
import { ReplaySubject, filter, firstValueFrom, lastValueFrom, take, timeout, toArray } from 'rxjs'
import { createServer, type ServerContext } from '../../actors/server.ts'
import { connect, type McpClient } from '../../actors/client.ts'
import type { ClientOptions, ListenEvent } from '../../actors/client/api.ts'
import { isBaggage, isTracestate } from '../../actors/context.ts'
import type { InspectionEvent } from '../../lib/connection.ts'
import type { JsonObject } from '../../lib/jsonrpc/message.ts'
import { MetaKey } from '../../lib/schema/modern.ts'
import { RELATED_TASK_META } from '../../actors/tasks/task.ts'
import { isReservedMetaKey, metaKeyIssues } from '../../lib/meta-keys.ts'
import { streamableHttp } from '../../transports/streamable-http.ts'
import { streamableHttpClient } from '../../transports/http-client.ts'
import { verifies } from '../helpers/verifies.ts'

const ACCEPT = 'application/json, text/event-stream'
const LEGACY = '2025-11-25'
const MODERN = '2026-07-28'
const INFO = { name: 'reqs-wire', version: '1' }
const text = (value: string) => ({ content: [{ type: 'text' as const, text: value }] })
const TRACEPARENT = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01'

const cleanups: Array<() => Promise<unknown> | unknown> = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

/** What a handler read from its context, as plain JSON (undefined fields left out). */
function readContext(ctx: ServerContext): JsonObject {
  return JSON.parse(JSON.stringify({
    progressToken: ctx.progressToken, trace: ctx.trace, clientInfo: ctx.clientInfo, logLevel: ctx.logLevel, meta: ctx.meta,
  })) as JsonObject
}

/** A server whose tools show what they read, report progress and log; listening on HTTP, every frame it sends recorded. */
async function start(sent: unknown[] = []) {
  const mcp = createServer({ name: 'meta', version: '1' }, { inspect: (event: InspectionEvent) => { if (event.type === 'rxmcp.frame.out') sent.push(event.message) } })
  mcp.tool('read', {}, (_args, ctx) => {
    ctx.progress(1)
    ctx.log('error', 'logged')
    return text(JSON.stringify(readContext(ctx)))
  })
  mcp.tool('steps', { execution: { taskSupport: 'optional' } }, (_args, ctx) => {
    for (let step = 1; step <= 2; step++) ctx.progress(step, 2)
    return text('stepped')
  })
  mcp.tool('ask', {}, async (_args, ctx) => {
    const answer = await ctx.elicit({ mode: 'form', message: 'Name?', requestedSchema: { type: 'object', properties: { name: { type: 'string' } } } })
    return text(`hello ${String(answer.content?.name)}`)
  })
  mcp.tool('add_tool', {}, () => { mcp.tool(`added_${Math.random().toString(36).slice(2)}`, {}, () => text('')); return text('added') })
  const http = streamableHttp({ port: 0, keepAliveMs: 0 })
  await mcp.listen(http)
  cleanups.push(() => mcp.close())
  return { mcp, url: http.url! }
}

async function client(url: string, options: ClientOptions): Promise<McpClient> {
  const connected = await connect(streamableHttpClient(url), INFO, options)
  cleanups.push(() => connected.close())
  return connected
}

/** A raw POST of one message; the message answering `id`, from a JSON or an SSE body. */
async function raw(url: string, message: JsonObject, headers: Record<string, string> = {}): Promise<{ answer: JsonObject | undefined; all: JsonObject[] }> {
  const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', accept: ACCEPT, ...headers }, body: JSON.stringify(message) })
  const body = await response.text()
  const all = (response.headers.get('content-type') ?? '').includes('text/event-stream')
    ? body.split('\n').filter(line => line.startsWith('data: ') && line.length > 6).map(line => JSON.parse(line.slice(6)) as JsonObject)
    : body === '' ? [] : [JSON.parse(body) as JsonObject]
  return { answer: all.find(each => each.id === message.id), all }
}

/** A modern request's headers and `_meta` for `method` (tools/call of `name`). */
function modern(name: string, meta: JsonObject): { headers: Record<string, string>; meta: JsonObject } {
  return {
    headers: { 'mcp-protocol-version': MODERN, 'mcp-method': 'tools/call', 'mcp-name': name },
    meta: { [MetaKey.protocolVersion]: MODERN, [MetaKey.clientCapabilities]: {}, ...meta },
  }
}

/** Every key of every `_meta` object anywhere in `value`. */
function metaKeys(value: unknown, into = new Set<string>()): Set<string> {
  if (Array.isArray(value)) for (const item of value) metaKeys(item, into)
  else if (typeof value === 'object' && value !== null) {
    for (const [key, child] of Object.entries(value)) {
      if (key === '_meta' && typeof child === 'object' && child !== null && !Array.isArray(child)) for (const name of Object.keys(child)) into.add(name)
      metaKeys(child, into)
    }
  }
  return into
}

describe('issue 20 requirements: _meta (reqs-wire)', () => {
  it('reads _meta key names by the rules: prefix labels, names, reserved prefixes', () => {
    for (const key of ['progressToken', 'traceparent', 'io.modelcontextprotocol/related-task', 'com.example/a.b_c-d', 'a/', 'x', 'com.example-1/9']) expect(metaKeyIssues(key), key).toEqual([])
    expect(metaKeyIssues('com.example/trace/id')).toEqual(['has more than one slash (a prefix ends at the only one)'])
    expect(metaKeyIssues('example.-com/name')[0]).toMatch(/^has a prefix "example.-com\/" whose labels/)
    expect(metaKeyIssues('1com.example/name')).toHaveLength(1)
    expect(metaKeyIssues('com..example/name')).toHaveLength(1)
    expect(metaKeyIssues('/name')).toHaveLength(1)
    expect(metaKeyIssues('com.example/-name')).toEqual(['has a name that does not begin and end with a letter or digit (letters, digits, hyphens, underscores and dots between)'])
    expect(metaKeyIssues('name_')).toHaveLength(1)
    expect(metaKeyIssues('na me')).toHaveLength(1)
    expect(metaKeyIssues('-x-/y.')).toHaveLength(2)
    for (const key of ['io.modelcontextprotocol/x', 'dev.mcp/x', 'org.modelcontextprotocol.api/x', 'com.mcp.tools/x']) expect(isReservedMetaKey(key), key).toBe(true)
    for (const key of ['com.example.mcp/x', 'mcp/x', 'progressToken', 'modelcontextprotocol.io/x']) expect(isReservedMetaKey(key), key).toBe(false)
  })

  for (const [id, era] of [['meta:key-names', 'legacy'], ['meta:key-names@2026-07-28', 'modern']] as const) {
    verifies(id, `writes only _meta keys that follow the naming rules (${era} era: requests, progress, tasks, input, listen, results)`, async () => {
      const sent: unknown[] = []
      const { url } = await start(sent)
      const c = await client(url, {
        era, inspect: event => { if (event.type === 'rxmcp.frame.out') sent.push(event.message) },
        elicitation: { form: () => ({ action: 'accept', content: { name: 'Ada' } }) },
      })
      await c.tools()
      await lastValueFrom(c.request('tools/call', { name: 'steps', arguments: {} }).pipe(toArray()))
      expect(await c.callTool('ask')).toEqual(text('hello Ada'))
      if (era === 'legacy') expect(await c.callToolAsTaskResult('steps', {})).toMatchObject(text('stepped'))
      else await c.setLoggingLevel('info')
      const listened = new ReplaySubject<ListenEvent>()
      const listening = c.listen({ toolsListChanged: true }).subscribe(listened)
      await firstValueFrom(listened.pipe(filter(event => event.type === 'acknowledged'), timeout(10_000)))
      await c.callTool('add_tool')
      await firstValueFrom(listened.pipe(filter(event => event.type === 'notification'), take(1), timeout(10_000)))
      listening.unsubscribe()
      const keys = [...metaKeys(sent)]
      expect(keys.map(key => [key, metaKeyIssues(key)]).filter(([, issues]) => issues!.length > 0)).toEqual([])
      // What each era has rxmcp write on its own.
      const expected = era === 'legacy'
        ? ['progressToken', RELATED_TASK_META]
        : ['progressToken', MetaKey.protocolVersion, MetaKey.clientCapabilities, MetaKey.clientInfo, MetaKey.logLevel, MetaKey.serverInfo, MetaKey.subscriptionId]
      expect(keys).toEqual(expect.arrayContaining(expected))
      // Every reserved key rxmcp writes is one MCP defines.
      const defined = new Set<string>([...Object.values(MetaKey), RELATED_TASK_META])
      expect(keys.filter(key => isReservedMetaKey(key) && !defined.has(key))).toEqual([])
    })
  }

  for (const [id, era] of [['meta:reserved-values', 'legacy'], ['meta:reserved-values@2026-07-28', 'modern']] as const) {
    verifies(id, `assumes nothing of the values at reserved _meta keys (${era} era): one of the wrong type is taken as absent, an unknown one passes untouched, the request is served`, async () => {
      const sent: unknown[] = []
      const { url } = await start(sent)
      const odd: JsonObject = {
        progressToken: { not: 'a token' },
        traceparent: 42,
        tracestate: ['x'],
        [RELATED_TASK_META]: 'not an object',
        'io.modelcontextprotocol/not-yet-defined': [1, { two: 2 }],
        'dev.mcp/anything': null,
        [MetaKey.subscriptionId]: { id: 1 },
        [MetaKey.serverInfo]: 'not an implementation',
      }
      let answer: JsonObject | undefined
      if (era === 'legacy') {
        const init = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', accept: ACCEPT }, body: JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: LEGACY, capabilities: {}, clientInfo: INFO } }) })
        await init.text()
        const headers = { 'mcp-session-id': init.headers.get('mcp-session-id')!, 'mcp-protocol-version': LEGACY }
        await raw(url, { jsonrpc: '2.0', method: 'notifications/initialized' }, headers)
        answer = (await raw(url, { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'read', arguments: {}, _meta: odd } }, headers)).answer
      } else {
        // The per-request fields MCP requires are right; the optional ones are of the wrong type.
        const request = modern('read', { ...odd, [MetaKey.clientInfo]: 'not an implementation', [MetaKey.logLevel]: 42 })
        answer = (await raw(url, { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'read', arguments: {}, _meta: request.meta } }, request.headers)).answer
      }
      const read = JSON.parse(((answer?.result as JsonObject).content as Array<{ text: string }>)[0]!.text) as JsonObject
      // Nothing read as a token, a trace, a client or a level; the _meta reaches the handler as sent.
      expect(read.progressToken).toBeUndefined()
      expect(read.trace).toBeUndefined()
      // Legacy: the client's identity is the one initialize gave; modern: the odd clientInfo is none.
      expect(read.clientInfo).toEqual(era === 'legacy' ? INFO : undefined)
      if (era === 'modern') expect(read.logLevel).toBe('emergency')
      expect(read.meta).toMatchObject(odd)
      // No progress went out for a token that is not one; the modern request asked for no log.
      const methods = sent.map(message => (message as JsonObject).method)
      expect(methods).not.toContain('notifications/progress')
      if (era === 'modern') expect(methods).not.toContain('notifications/message')
    })
  }

  verifies('meta:trace-formats@2026-07-28', 'hands a handler trace context only in W3C formats: a tracestate or baggage that breaks them is left out, a bad traceparent drops it all', async () => {
    const { url } = await start()
    const traceOf = async (meta: JsonObject) => {
      const request = modern('read', meta)
      const { answer } = await raw(url, { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'read', arguments: {}, _meta: request.meta } }, request.headers)
      return (JSON.parse(((answer!.result as JsonObject).content as Array<{ text: string }>)[0]!.text) as JsonObject).trace
    }
    const tracestate = 'rojo=00f067aa0ba902b7, congo=t61rcWkgMzE,tenant@vendor=a b'
    const baggage = 'userId=alice, serverNode=DF%2028;ttl=30 ;private, isProduction=false'
    expect(await traceOf({ traceparent: TRACEPARENT, tracestate, baggage })).toEqual({ traceparent: TRACEPARENT, tracestate, baggage })
    expect(await traceOf({ traceparent: TRACEPARENT, tracestate: 'Rojo=1', baggage: 'user id=alice' })).toEqual({ traceparent: TRACEPARENT })
    expect(await traceOf({ traceparent: TRACEPARENT, tracestate: 'a=b,c', baggage: 'a="quoted"' })).toEqual({ traceparent: TRACEPARENT })
    for (const traceparent of [TRACEPARENT.toUpperCase(), '00-00000000000000000000000000000000-00f067aa0ba902b7-01', 'ff' + TRACEPARENT.slice(2), '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7']) {
      expect(await traceOf({ traceparent, tracestate, baggage }), traceparent).toBeUndefined()
    }
  })

  it('checks tracestate and baggage by the W3C grammars, bounded', () => {
    expect(isTracestate('')).toBe(true)
    expect(isTracestate('a=1,,b=2')).toBe(true)
    expect(isTracestate('a=1 ')).toBe(true)
    expect(isTracestate('a= ')).toBe(false)
    expect(isTracestate('a=x=y')).toBe(false)
    expect(isTracestate('t@v=1')).toBe(true)
    expect(isTracestate('t@1v=1')).toBe(false)
    expect(isTracestate(Array.from({ length: 32 }, (_, n) => `k${n}=v`).join(','))).toBe(true)
    expect(isTracestate(Array.from({ length: 33 }, (_, n) => `k${n}=v`).join(','))).toBe(false)
    expect(isTracestate(`k=${'v'.repeat(256)}`)).toBe(true)
    expect(isTracestate(`k=${'v'.repeat(257)}`)).toBe(false)
    expect(isBaggage('k=')).toBe(true)
    expect(isBaggage('k = v ; p ; q = 1')).toBe(true)
    expect(isBaggage('')).toBe(false)
    expect(isBaggage('k=v,')).toBe(false)
    expect(isBaggage('k=a\\b')).toBe(false)
    expect(isBaggage(Array.from({ length: 64 }, (_, n) => `k${n}=v`).join(','))).toBe(true)
    expect(isBaggage(Array.from({ length: 65 }, (_, n) => `k${n}=v`).join(','))).toBe(false)
    expect(isBaggage(`k=${'v'.repeat(8190)}`)).toBe(true)
    expect(isBaggage(`k=${'v'.repeat(8191)}`)).toBe(false)
  })
})

