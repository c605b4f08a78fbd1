import { afterEach, describe, expect } from 'vitest'
import { ReplaySubject, filter, firstValueFrom, lastValueFrom, timeout, toArray } from 'rxjs'
import { createServer } from '../../actors/server.ts'
import { connect } from '../../actors/client.ts'
import type { ListenEvent } from '../../actors/client/api.ts'
import type { InspectionEvent } from '../../lib/connection.ts'
import type { JsonObject } from '../../lib/jsonrpc/message.ts'
import { MetaKey } from '../../lib/schema/modern.ts'
import { streamableHttp } from '../../transports/streamable-http.ts'
import { streamableHttpClient } from '../../transports/http-client.ts'
import { verifies } from '../helpers/verifies.ts'
import { collected } from '../helpers/collected.ts'

const INFO = { name: 'reqs-wire', version: '1' }
const text = (value: string) => ({ content: [{ type: 'text' as const, text: value }] })
const FORM = { mode: 'form' as const, message: 'Name?', requestedSchema: { type: 'object' as const, properties: { name: { type: 'string' as const } } } }

const cleanups: Array<() => Promise<unknown> | unknown> = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

/** One side's frames, in the order it handled them. */
type Log = Array<{ direction: 'in' | 'out'; message: JsonObject }>
const logInto = (log: { push(entry: Log[number]): unknown }) => (event: InspectionEvent) => {
  if (event.type === 'rxmcp.frame.in' || event.type === 'rxmcp.frame.out') log.push({ direction: event.type === 'rxmcp.frame.in' ? 'in' : 'out', message: event.message as unknown as JsonObject })
}

/**
 * The cancellations in `log` that name no request of this side still in progress when they went
 * out: a request this side sent before and has had no response to (MCP cancellation).
 */
function cancellationsNotInFlight(log: Log): JsonObject[] {
  const inFlight = new Set<unknown>()
  const wrong: JsonObject[] = []
  for (const { direction, message } of log) {
    if (direction === 'out' && 'id' in message && 'method' in message) inFlight.add(message.id)
    else if (direction === 'in' && 'id' in message && !('method' in message)) inFlight.delete(message.id)
    else if (direction === 'out' && message.method === 'notifications/cancelled') {
      const id = (message.params as JsonObject).requestId
      if (!inFlight.has(id)) wrong.push(message)
      inFlight.delete(id)
    }
  }
  return wrong
}

const cancellations = (log: Log) => log.filter(entry => entry.direction === 'out' && entry.message.method === 'notifications/cancelled').map(entry => entry.message.params as JsonObject)
const sentRequest = (log: Log, method: string, name?: string) => log.filter(entry => entry.direction === 'out' && entry.message.method === method
  && (name === undefined || (entry.message.params as JsonObject).name === name)).map(entry => entry.message.id)

/** Resolves after `count` calls of the returned function. */
function counter(count: number) {
  let reached!: () => void
  const done = new Promise<void>(resolve => { reached = resolve })
  let calls = 0
  return { done, hit: () => { if (++calls === count) reached() } }
}

describe('issue 20 requirements: cancellation (reqs-wire)', () => {
  verifies('cancellation:only-in-flight', 'cancels only requests it sent and has no answer to, in both directions (legacy era over HTTP)', async () => {
    // The server's frames, awaitable as they come (see `heard` below).
    const heard = collected<Log[number]>()
    const serverLog: Log = heard.items
    const clientLog: Log = []
    const mcp = createServer({ name: 'cancel', version: '1' }, { inspect: logInto(heard) })
    const started = counter(2)
    mcp.tool('hang', {}, (_args, ctx) => { started.hit(); return new Promise(resolve => ctx.signal.addEventListener('abort', () => resolve(text('aborted')))) })
    mcp.tool('ask_then_hang', {}, async (_args, ctx) => {
      const answer = await ctx.elicit(FORM)
      started.hit()
      await new Promise(resolve => ctx.signal.addEventListener('abort', resolve))
      return text(String(answer.content?.name))
    })
    mcp.tool('ask_unanswered', {}, async (_args, ctx) => text(String((await ctx.elicit({ ...FORM, message: 'Hold?' })).content?.name)))
    mcp.tool('echo', {}, () => text('echo'))
    const http = streamableHttp({ port: 0, keepAliveMs: 0 })
    await mcp.listen(http)
    cleanups.push(() => mcp.close())
    // The client holds the elicitation of ask_unanswered: the server's request is in flight when its call is cancelled.
    const holding = counter(1)
    const client = await connect(streamableHttpClient(http.url!), INFO, {
      era: 'legacy', inspect: logInto(clientLog),
      elicitation: { form: params => params.message === 'Hold?' ? (holding.hit(), new Promise(() => {})) : { action: 'accept', content: { name: 'Ada' } } },
    })
    cleanups.push(() => client.close())
    // Answered: unsubscribing from a finished request sends nothing.
    const echo = client.request('tools/call', { name: 'echo', arguments: {} }).subscribe()
    await client.callTool('echo')
    echo.unsubscribe()
    // In flight: each is cancelled on the wire by its caller leaving.
    const hang = client.request('tools/call', { name: 'hang', arguments: {} }).subscribe({ error: () => {} })
    const answered = client.request('tools/call', { name: 'ask_then_hang', arguments: {} }).subscribe({ error: () => {} })
    const unanswered = client.request('tools/call', { name: 'ask_unanswered', arguments: {} }).subscribe({ error: () => {} })
    await started.done
    await holding.done
    hang.unsubscribe()
    answered.unsubscribe()
    unanswered.unsubscribe()
    // The server reads the three cancellations (each on a POST of its own, in any order) and aborts
    // ask_unanswered, whose elicitation is still out: it cancels that one.
    const read = (log: readonly Log[number][]) => log.filter(entry => entry.direction === 'in' && entry.message.method === 'notifications/cancelled')
    await heard.when(log => read(log).length === 3)
    await heard.when(log => cancellations([...log]).length > 0)
    // A round trip after both: anything the server sends in reaction to them is out by its answer,
    // so the lists below are complete (no more cancellations than these).
    expect(await client.callTool('echo')).toEqual(text('echo'))

    expect(cancellations(clientLog).map(params => params.requestId)).toEqual([
      ...sentRequest(clientLog, 'tools/call', 'hang'), ...sentRequest(clientLog, 'tools/call', 'ask_then_hang'), ...sentRequest(clientLog, 'tools/call', 'ask_unanswered'),
    ])
    const elicitations = sentRequest(serverLog, 'elicitation/create')
    expect(elicitations).toHaveLength(2)
    expect(cancellations(serverLog).map(params => params.requestId)).toEqual([elicitations[1]])
    expect(cancellationsNotInFlight(clientLog)).toEqual([])
    expect(cancellationsNotInFlight(serverLog)).toEqual([])
  })

  verifies('cancellation:server-only-listen@2026-07-28', 'sends notifications/cancelled only to end a listen stream (modern era over HTTP: cancelled calls, input rounds, refused requests, a shutdown)', async () => {
    const serverLog: Log = []
    const mcp = createServer({ name: 'cancel', version: '1' }, { inspect: logInto(serverLog), capabilities: { tools: { listChanged: true } } })
    const started = counter(1)
    mcp.tool('hang', {}, (_args, ctx) => { started.hit(); return new Promise(resolve => ctx.signal.addEventListener('abort', () => resolve(text('aborted')))) })
    mcp.tool('ask', {}, async (_args, ctx) => text(`hello ${String((await ctx.elicit(FORM)).content?.name)}`))
    mcp.tool('ping_client', {}, async (_args, ctx) => {
      const refusal = await lastValueFrom(ctx.request('ping')).then(() => 'sent', (error: Error) => error.name)
      return text(refusal)
    })
    const http = streamableHttp({ port: 0, keepAliveMs: 0 })
    await mcp.listen(http)
    const client = await connect(streamableHttpClient(http.url!), INFO, { era: 'modern', elicitation: { form: () => ({ action: 'accept', content: { name: 'Ada' } }) } })
    cleanups.push(() => client.close())
    expect(await client.callTool('ask')).toEqual(text('hello Ada'))
    expect(await client.callTool('ping_client')).toEqual(text('CapabilityError'))
    const hang = client.request('tools/call', { name: 'hang', arguments: {} }).subscribe({ error: () => {} })
    await started.done
    hang.unsubscribe()
    const events = new ReplaySubject<ListenEvent>()
    client.listen({ toolsListChanged: true }).subscribe(events)
    await firstValueFrom(events.pipe(filter(event => event.type === 'acknowledged'), timeout(10_000)))
    // The server shuts down: its listen stream ends with the one cancellation the modern era allows.
    await mcp.close()
    await lastValueFrom(events.pipe(toArray(), timeout(10_000)))
    const listens = serverLog.filter(entry => entry.direction === 'in' && entry.message.method === 'subscriptions/listen').map(entry => entry.message.id)
    const cancelled = cancellations(serverLog)
    expect(listens).toHaveLength(1)
    expect(cancelled).toEqual([{ requestId: listens[0], reason: expect.any(String), _meta: { [MetaKey.subscriptionId]: listens[0] } }])
  })
})
