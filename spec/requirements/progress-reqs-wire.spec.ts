import { afterEach, describe, expect } from 'vitest'
import { lastValueFrom, toArray } from 'rxjs'
import { createServer, type ServerContext } from '../../actors/server.ts'
import { connect } from '../../actors/client.ts'
import type { JsonObject } from '../../lib/jsonrpc/message.ts'
import { LocalErrorCode } from '../../lib/jsonrpc/errors.ts'
import { ProgressWarning } from '../../lib/operators/progress.ts'
import { createSseParser, type SseEvent } from '../../lib/codec/sse.ts'
import { streamableHttp } from '../../transports/streamable-http.ts'
import { streamableHttpClient } from '../../transports/http-client.ts'
import { verifies } from '../helpers/verifies.ts'

const ACCEPT = 'application/json, text/event-stream'
const LEGACY = '2025-11-25'
const INFO = { name: 'reqs-wire', version: '1' }
const text = (value: string) => ({ content: [{ type: 'text' as const, text: value }] })

const cleanups: Array<() => Promise<unknown> | unknown> = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

/** A gate a handler waits at until the test opens it. */
function gate() {
  let open!: () => void
  const opened = new Promise<void>(resolve => { open = resolve })
  return { opened, open }
}

/**
 * A handler that reports progress going up, level, down, not a number, then up again: only the
 * values above the last one sent may reach the wire.
 */
function reportsUnevenly(ctx: ServerContext) {
  for (const value of [1, 2, 2, 1.5, Number.NaN, 3, Number.POSITIVE_INFINITY, 4]) ctx.progress(value, 4)
  return text('reported')
}

/** The messages of an SSE response as they arrive; `until` resolves once one matches. */
function reader(response: Response) {
  const seen: JsonObject[] = []
  const waiters: Array<{ match: (message: JsonObject) => boolean; resolve: () => void }> = []
  const parser = createSseParser((event: SseEvent) => {
    if (event.data === '') return
    const message = JSON.parse(event.data) as JsonObject
    seen.push(message)
    for (const waiter of waiters.splice(0)) {
      if (waiter.match(message)) waiter.resolve()
      else waiters.push(waiter)
    }
  })
  void (async () => {
    const body = response.body!.getReader()
    const decoder = new TextDecoder()
    for (;;) {
      const { done, value } = await body.read().catch(() => ({ done: true as const, value: undefined }))
      if (done) break
      parser.write(decoder.decode(value, { stream: true }))
    }
  })()
  const until = (match: (message: JsonObject) => boolean) => seen.some(match) ? Promise.resolve()
    : new Promise<void>(resolve => { waiters.push({ match, resolve }) })
  return { seen, until }
}

describe('issue 20 requirements: progress (reqs-wire)', () => {
  for (const [id, era] of [['progress:increasing', 'legacy'], ['progress:increasing@2026-07-28', 'modern']] as const) {
    verifies(id, `sends only increasing progress over HTTP (${era} era): a value not above the last is dropped and reported once as a ProgressWarning`, async () => {
      const reported: unknown[] = []
      const mcp = createServer({ name: 'progress', version: '1' }, { reportUnhandledError: error => reported.push(error) })
      mcp.tool('uneven', {}, (_args, ctx) => reportsUnevenly(ctx))
      const http = streamableHttp({ port: 0, keepAliveMs: 0 })
      await mcp.listen(http)
      cleanups.push(() => mcp.close())
      const client = await connect(streamableHttpClient(http.url!), INFO, { era })
      cleanups.push(() => client.close())
      expect(client.era).toBe(era)
      const seen = await lastValueFrom(client.request('tools/call', { name: 'uneven', arguments: {} }).pipe(toArray()))
      expect(seen.filter(event => event.type === 'progress').map(event => event.type === 'progress' && event.progress)).toEqual([1, 2, 3, 4])
      expect(seen.at(-1)).toMatchObject({ type: 'result', result: text('reported') })
      expect(reported).toHaveLength(1)
      const warning = reported[0] as ProgressWarning
      expect(warning).toBeInstanceOf(ProgressWarning)
      expect(warning.code).toBe(LocalErrorCode.Progress)
      expect(warning).toMatchObject({ progress: 2, last: 2 })
      expect(warning.message).toBe('Progress 2 does not increase on the last value sent, 2; the notification was dropped (MCP progress values must increase)')
    })
  }

  verifies('progress:task-stops', 'sends no progress for a task once it is completed or cancelled, whatever its handler still reports', async () => {
    const mcp = createServer({ name: 'progress', version: '1' }, { reportUnhandledError: () => {} })
    let done: ServerContext | undefined
    mcp.tool('done', { execution: { taskSupport: 'optional' } }, (_args, ctx) => {
      done = ctx
      ctx.progress(1)
      return text('done')
    })
    const stubborn = gate()
    const reportedLate = gate()
    mcp.tool('stubborn', { execution: { taskSupport: 'optional' } }, async (_args, ctx) => {
      ctx.progress(1)
      // Cancelled meanwhile: the handler ignores its signal and reports on.
      await stubborn.opened
      ctx.progress(2)
      reportedLate.open()
      return text('too late')
    })
    const http = streamableHttp({ port: 0, keepAliveMs: 0 })
    await mcp.listen(http)
    cleanups.push(() => mcp.close())
    const url = http.url!
    const init = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', accept: ACCEPT }, body: JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: LEGACY, capabilities: {}, clientInfo: INFO } }) })
    await init.text()
    const headers = { 'content-type': 'application/json', accept: ACCEPT, 'mcp-session-id': init.headers.get('mcp-session-id')!, 'mcp-protocol-version': LEGACY }
    const call = async (id: number, method: string, params: JsonObject): Promise<JsonObject> => {
      const response = await fetch(url, { method: 'POST', headers, body: JSON.stringify({ jsonrpc: '2.0', id, method, params }) })
      const messages: JsonObject[] = []
      const parser = createSseParser(event => { if (event.data !== '') messages.push(JSON.parse(event.data) as JsonObject) })
      parser.write(await response.text())
      return messages.find(message => message.id === id)!.result as JsonObject
    }
    await fetch(url, { method: 'POST', headers, body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }) })
    // A task's messages go on the session's GET stream once the call that made it is answered.
    const get = reader(await fetch(url, { headers: { accept: 'text/event-stream', 'mcp-session-id': headers['mcp-session-id'], 'mcp-protocol-version': LEGACY } }))
    const statusOf = (taskId: string, status: string) => (message: JsonObject) => message.method === 'notifications/tasks/status'
      && (message.params as JsonObject).taskId === taskId && (message.params as JsonObject).status === status

    const completed = (await call(1, 'tools/call', { name: 'done', arguments: {}, task: {}, _meta: { progressToken: 'done-token' } })).task as JsonObject
    await get.until(statusOf(completed.taskId as string, 'completed'))
    done!.progress(2)

    const cancelled = (await call(2, 'tools/call', { name: 'stubborn', arguments: {}, task: {}, _meta: { progressToken: 'stubborn-token' } })).task as JsonObject
    expect(await call(3, 'tasks/cancel', { taskId: cancelled.taskId as string })).toMatchObject({ status: 'cancelled' })
    stubborn.open()
    await reportedLate.opened
    // Sent after every report above: the GET stream has what they sent when it arrives.
    mcp.log('info', 'end of test')
    await get.until(message => message.method === 'notifications/message')
    const progress = get.seen.filter(message => message.method === 'notifications/progress').map(message => message.params as JsonObject)
    // Each task's report while it worked may have gone on its POST stream or here; none after its end.
    expect(progress.filter(params => params.progress !== 1)).toEqual([])
    await get.until(statusOf(cancelled.taskId as string, 'cancelled'))
  })
})
