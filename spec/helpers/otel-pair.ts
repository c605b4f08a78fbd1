import { context, propagation, trace } from '@opentelemetry/api'
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base'
import { expect } from 'vitest'
import { defer, from, map } from 'rxjs'
import { connect, type ClientOptions, type McpClient } from '../../actors/client.ts'
import { createServer, type McpServer, type ServerContext, type ServerSession } from '../../actors/server.ts'
import { createMemoryPair } from '../../transports/memory.ts'
import { streamableHttp } from '../../transports/streamable-http.ts'
import { streamableHttpClient } from '../../transports/http-client.ts'
import type { Transport } from '../../lib/transport.ts'
import { InvalidParamsError } from '../../lib/jsonrpc/errors.ts'
import { arrivals } from './arrivals.ts'
import { inMemoryOtel, type InMemoryOtel } from './otel.ts'

export const LEGACY = '2025-11-25'
export const MODERN = '2026-07-28'
export const CLIENT_INFO = { name: 'otel-client', version: '1' }

export const text = (value: string) => ({ content: [{ type: 'text' as const, text: value }] })

/** What the test server's tools let a test wait on: calls that reached `wait`, tasks that wait at `slow`. */
export interface Waits {
  /** The contexts of the `wait` calls that started (each waits until its signal aborts). */
  readonly waiting: ReturnType<typeof arrivals<ServerContext>>
  /** Opens every `slow` call waiting now. */
  openSlow(): void
  /** Resolves once `n` `slow` calls wait. */
  slowStarted(n: number): Promise<unknown>
}

/**
 * The server of the telemetry specs, its telemetry in `otel`: tools for every outcome (echo, a tool
 * error, progress, a wait on the signal, handler-inner spans three ways, requests back to the
 * client, its own `_meta` and baggage, a task), a prompt with a completer, a resource.
 */
export function telemetryServer(otel: InMemoryOtel | undefined, unhandled: unknown[], captureToolArguments = false): { server: McpServer } & Waits {
  const server = createServer({ name: 'otel-server', version: '1' }, {
    telemetry: otel === undefined ? undefined : { tracerProvider: otel.tracerProvider, meterProvider: otel.meterProvider, captureToolArguments },
    reportUnhandledError: error => unhandled.push(error),
    tasks: { pollIntervalMs: 5 },
  })
  const waiting = arrivals<ServerContext>()
  const slow = arrivals<() => void>()
  // The application's own tracer, on the server's provider: its spans nest by the active context.
  const app = () => otel!.tracerProvider.getTracer('app')
  server.tool('echo', { inputSchema: { type: 'object', properties: { text: { type: 'string' } } } }, ({ text: value }) => text(String(value)))
  server.tool('fails', {}, () => ({ ...text('no'), isError: true }))
  server.tool('progress', {}, (_args, ctx) => {
    ctx.progress(1, 2)
    ctx.progress(2, 2)
    return text('done')
  })
  server.tool('wait', {}, (_args, ctx) => new Promise((_resolve, reject) => {
    ctx.signal.addEventListener('abort', () => reject(ctx.signal.reason))
    waiting.push(ctx)
  }))
  server.tool('inner-sync', {}, () => app().startActiveSpan('inner', span => { span.end(); return text('sync') }))
  server.tool('inner-async', {}, async () => {
    await Promise.resolve()
    app().startSpan('inner').end()
    return text('async')
  })
  server.tool('inner-observable', {}, () => defer(() => from(Promise.resolve())).pipe(map(() => {
    app().startSpan('inner').end()
    return text('observable')
  })))
  server.tool('ask', {}, async (_args, ctx) => {
    const answer = await ctx.elicit({ mode: 'form', message: 'Name?', requestedSchema: { type: 'object', properties: { name: { type: 'string' } } } }, { key: 'name' })
    return text(`Hello, ${String(answer.content?.name)}`)
  })
  server.tool('roots', {}, async (_args, ctx) => text((await ctx.listRoots()).roots.map(root => root.uri).join(',')))
  server.tool('sample', {}, async (_args, ctx) => {
    const sampled = await ctx.sample({ messages: [{ role: 'user', content: { type: 'text', text: 'hi' } }], maxTokens: 8 })
    return text((sampled.content as { text: string }).text)
  })
  server.tool('broken-task', { execution: { taskSupport: 'optional' } }, async () => {
    await new Promise<void>(resolve => slow.push(resolve))
    throw new InvalidParamsError('Invalid params: broken')
  })
  server.tool('meta', {}, (_args, ctx) => text(JSON.stringify(ctx.meta ?? {})))
  server.tool('baggage', {}, () => text(JSON.stringify(Object.fromEntries((propagation.getBaggage(context.active())?.getAllEntries() ?? []).map(([key, entry]) => [key, entry.value])))))
  server.tool('trace', {}, () => text(trace.getSpanContext(context.active())?.spanId ?? 'none'))
  server.tool('slow', { execution: { taskSupport: 'optional' } }, async () => {
    await new Promise<void>(resolve => slow.push(resolve))
    return text('slow done')
  })
  server.prompt('greet', { arguments: [{ name: 'name' }], complete: { name: value => ['Ada', 'Alan'].filter(name => name.startsWith(value)) } },
    ({ name }) => ({ messages: [{ role: 'user', content: { type: 'text', text: `Hello ${String(name)}` } }] }))
  server.resource('file:///notes.txt', { name: 'notes' }, () => 'notes')
  return { server, waiting, openSlow: () => slow.items.splice(0).forEach(open => open()), slowStarted: n => slow.atLeast(n) }
}

/** What every client of the specs answers with: an elicitation, roots. */
export const CLIENT_OPTIONS: ClientOptions = {
  elicitation: { form: () => ({ action: 'accept', content: { name: 'Ada' } }) },
  roots: [{ uri: 'file:///work', name: 'work' }],
  sampling: () => ({ role: 'assistant', model: 'otel-model', content: { type: 'text', text: 'sampled' } }),
}

export type Wiring = 'memory' | 'http'
export type Era = 'legacy' | 'modern'

/** A server and a client with telemetry each (`s`, `c`: separate SDKs), in `era`, over `wiring`. */
export interface Pair extends Waits {
  readonly server: McpServer
  readonly client: McpClient
  readonly s: InMemoryOtel
  readonly c: InMemoryOtel
  /** The Streamable HTTP listener's URL (http wiring). */
  readonly url: string | undefined
  /** The client's transport. */
  readonly transport: Transport
  /** The server's session (memory wiring). */
  readonly session: ServerSession | undefined
}

/** Starts a {@link Pair}; what it opened is closed by the cleanups. */
export async function startPair(era: Era, wiring: Wiring, cleanups: Array<() => unknown>, unhandled: unknown[], clientOptions: ClientOptions = {}, captureToolArguments = false): Promise<Pair> {
  const s = inMemoryOtel()
  const c = inMemoryOtel()
  const made = telemetryServer(s, unhandled, captureToolArguments)
  const { server } = made
  cleanups.push(() => server.close())
  let url: string | undefined
  let transport: Transport
  let session: ServerSession | undefined
  if (wiring === 'memory') {
    const [clientSide, serverSide] = createMemoryPair()
    session = await server.listen(serverSide)
    transport = clientSide
  } else {
    const http = streamableHttp()
    await server.listen(http)
    url = http.url!
    transport = streamableHttpClient(url)
  }
  const options: ClientOptions = {
    ...CLIENT_OPTIONS, era, ...(era === 'legacy' ? { protocolVersion: LEGACY } : {}),
    telemetry: { tracerProvider: c.tracerProvider, meterProvider: c.meterProvider, captureToolArguments }, reportUnhandledError: error => unhandled.push(error), ...clientOptions,
  }
  const client = await connect(transport, CLIENT_INFO, options)
  cleanups.push(() => client.close())
  return { ...made, client, s, c, url, transport, session }
}

/** Asserts that `child` is a child of `parent`: same trace, its parent span id `parent`'s span id. */
export function expectChildOf(child: ReadableSpan, parent: ReadableSpan): void {
  expect(child.spanContext().traceId).toBe(parent.spanContext().traceId)
  expect(child.parentSpanContext?.spanId).toBe(parent.spanContext().spanId)
}

/** The W3C traceparent naming `span`. */
export function traceparentOf(span: ReadableSpan): string {
  const { traceId, spanId, traceFlags } = span.spanContext()
  return `00-${traceId}-${spanId}-${traceFlags.toString(16).padStart(2, '0')}`
}
