import { describe, expect, it } from 'vitest'
import { SpanKind, SpanStatusCode } from '@opentelemetry/api'
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base'
import { lastValueFrom, take, toArray } from 'rxjs'
import { CancelledError, ConnectionClosedError, McpError, TimeoutError } from '../../lib/jsonrpc/errors.ts'
import { asyncContextForFile } from '../helpers/otel.ts'
import { expectChildOf, startPair, type Era, type Wiring } from '../helpers/otel-pair.ts'
import { cleanupsAfterEach } from '../helpers/cleanups.ts'
import { TestClock } from '../helpers/test-clock.ts'

asyncContextForFile()
const { cleanups, unhandled } = cleanupsAfterEach()

/** The span's outcome: its error.type and rpc.response.status_code (undefined when none), its status. */
function outcome(span: ReadableSpan) {
  return { errorType: span.attributes['error.type'], code: span.attributes['rpc.response.status_code'], status: span.status }
}

/** The span's events: names and attributes. */
function events(span: ReadableSpan) {
  return span.events.map(event => ({ name: event.name, attributes: event.attributes }))
}

/** The one span named `name` on the side, of `kind`. */
function one(spans: ReadableSpan[], name: string, kind: SpanKind): ReadableSpan {
  const found = spans.filter(span => span.name === name && span.kind === kind)
  expect(found).toHaveLength(1)
  return found[0]!
}

const WIRINGS: ReadonlyArray<{ era: Era; wiring: Wiring }> = [{ era: 'legacy', wiring: 'memory' }, { era: 'modern', wiring: 'memory' }, { era: 'modern', wiring: 'http' }]

for (const { era, wiring } of WIRINGS) {
  describe(`telemetry outcomes, ${era} era over ${wiring === 'http' ? 'Streamable HTTP' : 'a memory pair'}`, () => {
    const start = () => startPair(era, wiring, cleanups, unhandled)

    it('records an unknown tool as error.type -32602 with the status code, on both sides', async () => {
      const pair = await start()
      const error = await pair.client.callTool('nope').catch((caught: unknown) => caught)
      expect(error).toBeInstanceOf(McpError)
      const expected = { errorType: '-32602', code: '-32602', status: { code: SpanStatusCode.ERROR, message: 'Invalid params: unknown tool "nope"' } }
      expect(outcome(one(pair.c.spans(), 'tools/call nope', SpanKind.CLIENT))).toEqual(expected)
      expect(outcome(one(pair.s.spans(), 'tools/call nope', SpanKind.SERVER))).toEqual(expected)
    })

    it('records an unknown method as error.type -32601, on both sides', async () => {
      const pair = await start()
      const error = await lastValueFrom(pair.client.request('x/unknown', {})).catch((caught: unknown) => caught)
      expect((error as McpError).code).toBe(-32601)
      const expected = { errorType: '-32601', code: '-32601', status: { code: SpanStatusCode.ERROR, message: 'Method not found: x/unknown' } }
      expect(outcome(one(pair.c.spans(), 'x/unknown', SpanKind.CLIENT))).toEqual(expected)
      expect(outcome(one(pair.s.spans(), 'x/unknown', SpanKind.SERVER))).toEqual(expected)
    })

    it('records an isError result as error.type tool_error, on both sides', async () => {
      const pair = await start()
      expect(await pair.client.callTool('fails')).toMatchObject({ isError: true })
      const expected = { errorType: 'tool_error', code: undefined, status: { code: SpanStatusCode.ERROR, message: 'tool_error' } }
      expect(outcome(one(pair.c.spans(), 'tools/call fails', SpanKind.CLIENT))).toEqual(expected)
      expect(outcome(one(pair.s.spans(), 'tools/call fails', SpanKind.SERVER))).toEqual(expected)
    })

    it('records a client timeout as timeout, and the server span ends cancelled when the cancellation arrives', async () => {
      // The client's request timeouts run on its scheduler: virtual here, moved once the handler runs.
      const clock = new TestClock()
      const pair = await startPair(era, wiring, cleanups, unhandled, { scheduler: clock })
      const call = pair.client.callTool('wait', {}, { timeout: 200 }).catch((caught: unknown) => caught)
      await pair.waiting.atLeast(1)
      clock.advance(200)
      const error = await call
      expect(error).toBeInstanceOf(TimeoutError)
      expect(outcome(one(pair.c.spans(), 'tools/call wait', SpanKind.CLIENT))).toMatchObject({ errorType: 'timeout', status: { code: SpanStatusCode.ERROR } })
      const [server] = await pair.s.ended('tools/call wait')
      expect(outcome(server!)).toMatchObject({ errorType: 'cancelled', code: undefined, status: { code: SpanStatusCode.ERROR, message: 'cancelled' } })
      expect(events(server!).map(event => event.name)).toEqual(['mcp.cancelled'])
    })

    it('records an aborted call as cancelled on both sides, with an mcp.cancelled event on the server', async () => {
      const pair = await start()
      const abort = new AbortController()
      const call = pair.client.callTool('wait', {}, { signal: abort.signal }).catch((caught: unknown) => caught)
      await pair.waiting.atLeast(1)
      abort.abort()
      expect(await call).toBeInstanceOf(CancelledError)
      expect(outcome(one(pair.c.spans(), 'tools/call wait', SpanKind.CLIENT))).toEqual({ errorType: 'cancelled', code: undefined, status: { code: SpanStatusCode.ERROR, message: expect.any(String) } })
      const [server] = await pair.s.ended('tools/call wait')
      expect(outcome(server!)).toEqual({ errorType: 'cancelled', code: undefined, status: { code: SpanStatusCode.ERROR, message: 'cancelled' } })
      expect(events(server!)).toEqual([{ name: 'mcp.cancelled', attributes: { 'mcp.cancel.reason': expect.any(String) } }])
    })

    it('records an unsubscribed call as cancelled on both sides', async () => {
      const pair = await start()
      const subscription = pair.client.request('tools/call', { name: 'wait' }).subscribe({ error: () => {} })
      await pair.waiting.atLeast(1)
      subscription.unsubscribe()
      expect(outcome(one(pair.c.spans(), 'tools/call wait', SpanKind.CLIENT))).toEqual({ errorType: 'cancelled', code: undefined, status: { code: SpanStatusCode.ERROR, message: 'cancelled' } })
      const [server] = await pair.s.ended('tools/call wait')
      expect(outcome(server!)).toMatchObject({ errorType: 'cancelled', status: { code: SpanStatusCode.ERROR } })
    })

    // Over modern Streamable HTTP the server cannot tell a client gone from one cancelling: closing
    // the request's stream is how a modern client cancels.
    it(`records a request in flight when the connection closes as connection_closed (the server: ${wiring === 'http' ? 'cancelled' : 'connection_closed'})`, async () => {
      const pair = await start()
      const call = pair.client.callTool('wait').catch((caught: unknown) => caught)
      await pair.waiting.atLeast(1)
      await pair.client.close()
      expect(await call).toBeInstanceOf(ConnectionClosedError)
      expect(outcome(one(pair.c.spans(), 'tools/call wait', SpanKind.CLIENT))).toMatchObject({ errorType: 'connection_closed', status: { code: SpanStatusCode.ERROR } })
      const [server] = await pair.s.ended('tools/call wait')
      expect(outcome(server!)).toMatchObject({ errorType: wiring === 'http' ? 'cancelled' : 'connection_closed', status: { code: SpanStatusCode.ERROR } })
    })

    it('records progress as mcp.progress events on both sides', async () => {
      const pair = await start()
      const seen: number[] = []
      await pair.client.callTool('progress', {}, { onProgress: event => seen.push(event.progress) })
      expect(seen).toEqual([1, 2])
      const progress = [1, 2].map(value => ({ name: 'mcp.progress', attributes: { 'mcp.progress.value': value, 'mcp.progress.total': 2 } }))
      expect(events(one(pair.c.spans(), 'tools/call progress', SpanKind.CLIENT))).toEqual(progress)
      expect(events(one(pair.s.spans(), 'tools/call progress', SpanKind.SERVER))).toEqual(progress)
    })

    it('records a task as a "task {tool}" span linked to the request span, ended with its final status', async () => {
      const pair = await start()
      const result = pair.client.callToolAsTaskResult('slow')
      await pair.slowStarted(1)
      pair.openSlow()
      expect(await result).toMatchObject({ content: [{ type: 'text', text: 'slow done' }] })
      const [task] = await pair.s.ended('task slow')
      const request = one(pair.s.spans(), 'tools/call slow', SpanKind.SERVER)
      const taskId = request.attributes['mcp.task.id']
      expect(taskId).toEqual(expect.any(String))
      expect(one(pair.c.spans(), 'tools/call slow', SpanKind.CLIENT).attributes['mcp.task.id']).toBe(taskId)
      expect(task!.kind).toBe(SpanKind.INTERNAL)
      expect(task!.attributes).toEqual({ 'mcp.task.id': taskId, 'mcp.task.status': 'completed', 'gen_ai.tool.name': 'slow' })
      expect(task!.status).toEqual({ code: SpanStatusCode.UNSET })
      expect(task!.links.map(link => link.context.spanId)).toEqual([request.spanContext().spanId])
      expectChildOf(task!, request)
      expect(events(task!)).toEqual([{ name: 'mcp.task.status', attributes: { 'mcp.task.status': 'completed' } }])
    })

    it('ends a failed task\'s span with error.type task_failed and an error status', async () => {
      const pair = await start()
      const result = pair.client.callToolAsTaskResult('broken-task').catch((caught: unknown) => caught)
      await pair.slowStarted(1)
      pair.openSlow()
      expect(await result).toBeInstanceOf(McpError)
      const [task] = await pair.s.ended('task broken-task')
      expect(task!.attributes).toMatchObject({ 'mcp.task.status': 'failed', 'error.type': 'task_failed' })
      expect(task!.status).toEqual({ code: SpanStatusCode.ERROR, message: 'task failed' })
    })

    it('ends a cancelled task\'s span with error.type cancelled', async () => {
      const pair = await start()
      const [first] = await lastValueFrom(pair.client.callToolAsTask('slow').pipe(take(1), toArray()))
      const taskId = first!.type === 'task' ? first!.task.taskId : ''
      await pair.slowStarted(1)
      await pair.client.tasks.cancel(taskId)
      const [task] = await pair.s.ended('task slow')
      expect(task!.attributes).toEqual({ 'mcp.task.id': taskId, 'mcp.task.status': 'cancelled', 'gen_ai.tool.name': 'slow', 'error.type': 'cancelled' })
      pair.openSlow()
    })

    it('records tool arguments and results only when captureToolArguments is set', async () => {
      const plain = await start()
      await plain.client.callTool('echo', { text: 'secret' })
      for (const span of [one(plain.c.spans(), 'tools/call echo', SpanKind.CLIENT), one(plain.s.spans(), 'tools/call echo', SpanKind.SERVER)]) {
        expect(span.attributes).not.toHaveProperty('gen_ai.tool.call.arguments')
        expect(span.attributes).not.toHaveProperty('gen_ai.tool.call.result')
      }
      const pair = await startPair(era, wiring, cleanups, unhandled, {}, true)
      await pair.client.callTool('echo', { text: 'secret' })
      expect(one(pair.c.spans(), 'tools/call echo', SpanKind.CLIENT).attributes['gen_ai.tool.call.arguments']).toBe('{"text":"secret"}')
      const server = one(pair.s.spans(), 'tools/call echo', SpanKind.SERVER)
      expect(server.attributes['gen_ai.tool.call.arguments']).toBe('{"text":"secret"}')
      // The result as answered (in the modern era with its resultType and _meta).
      expect(JSON.parse(server.attributes['gen_ai.tool.call.result'] as string)).toMatchObject({ content: [{ type: 'text', text: 'secret' }] })
    })

    if (era === 'modern') {
      it('records an input_required round as an mcp.input_required event, each round a span pair of its own', async () => {
        const pair = await start()
        expect(await pair.client.callTool('ask')).toMatchObject({ content: [{ type: 'text', text: 'Hello, Ada' }] })
        const clients = pair.c.spans().filter(span => span.name === 'tools/call ask')
        const servers = pair.s.spans().filter(span => span.name === 'tools/call ask')
        expect(clients.map(events)).toEqual([[{ name: 'mcp.input_required', attributes: {} }], []])
        expect(servers.map(events)).toEqual([[{ name: 'mcp.input_required', attributes: { 'mcp.input_required.keys': ['name'] } }], []])
        expectChildOf(servers[0]!, clients[0]!)
        expectChildOf(servers[1]!, clients[1]!)
        expect(clients.concat(servers).map(span => span.status)).toEqual(Array(4).fill({ code: SpanStatusCode.UNSET }))
      })
    }
  })
}
