/**
 * Issue 25 end to end, over real processes: our client (in this process) -> `rxmcp gateway` -> the
 * everything server of examples/telemetry/server.ts, and our client -> `rxmcp bridge` -> the same
 * server over stdio, each process exporting over OTLP/HTTP to a receiver in this test, configured
 * only by the standard OTEL_* variables. Every span of a call is in one trace, linked by parent ids;
 * the children's last metrics arrive when they are stopped (SIGTERM: the SDK's final flush).
 */
import { afterEach, describe, expect, it } from 'vitest'
import { spawn, type ChildProcess } from 'node:child_process'
import { createServer, type IncomingMessage } from 'node:http'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base'
import { concatMap, filter, firstValueFrom } from 'rxjs'
import { connect, type McpClient } from '../../actors/client.ts'
import { httpClient } from '../../transports/http-client.ts'
import { closeServer, listenOn } from '../../transports/listen.ts'

const root = fileURLToPath(new URL('../..', import.meta.url))
const cleanup: (() => Promise<unknown>)[] = []
afterEach(async () => { for (const close of cleanup.splice(0).reverse()) await close() })

/** A span as the receiver keeps it: ids in hex, as OTLP's JSON encoding writes them. */
interface Span { service: string; name: string; kind: number; traceId: string; spanId: string; parentSpanId?: string; attributes: Record<string, unknown> }
/** A metric data point, flattened. */
interface Point { service: string; name: string; value: number | undefined }
/** One POST the receiver took. */
interface Post { path: string; contentType: string; bytes: number; service?: string }

/** OTLP's SpanKind numbers. */
const SERVER = 2
const CLIENT = 3

type AnyValue = { stringValue?: string; intValue?: string | number; doubleValue?: number; boolValue?: boolean }
const valueOf = (value: AnyValue | undefined) => value?.stringValue ?? value?.intValue ?? value?.doubleValue ?? value?.boolValue
const attributesOf = (list: { key: string; value: AnyValue }[] | undefined) => Object.fromEntries((list ?? []).map(entry => [entry.key, valueOf(entry.value)]))

/**
 * An OTLP/HTTP receiver on 127.0.0.1:0: POST /v1/traces, /v1/metrics and /v1/logs; JSON bodies are
 * decoded, protobuf ones counted. `until` resolves once what it reads holds, checked on each POST.
 */
async function receiver() {
  const spans: Span[] = []
  const points: Point[] = []
  const posts: Post[] = []
  const waiters = new Set<() => void>()
  const node = createServer((req: IncomingMessage, res) => {
    const chunks: Buffer[] = []
    req.on('data', chunk => chunks.push(chunk as Buffer))
    req.on('end', () => {
      const body = Buffer.concat(chunks)
      const contentType = req.headers['content-type'] ?? ''
      const post: Post = { path: req.url ?? '', contentType, bytes: body.length }
      if (contentType.startsWith('application/json')) {
        const document = JSON.parse(body.toString('utf8'))
        for (const resource of document.resourceSpans ?? []) {
          const service = String(attributesOf(resource.resource?.attributes)['service.name'])
          post.service = service
          for (const scope of resource.scopeSpans ?? []) for (const span of scope.spans ?? []) {
            spans.push({ service, name: span.name, kind: span.kind, traceId: span.traceId, spanId: span.spanId, parentSpanId: span.parentSpanId || undefined, attributes: attributesOf(span.attributes) })
          }
        }
        for (const resource of document.resourceMetrics ?? []) {
          const service = String(attributesOf(resource.resource?.attributes)['service.name'])
          post.service = service
          for (const scope of resource.scopeMetrics ?? []) for (const metric of scope.metrics ?? []) {
            const dataPoints = metric.gauge?.dataPoints ?? metric.sum?.dataPoints ?? metric.histogram?.dataPoints ?? []
            for (const point of dataPoints) points.push({ service, name: metric.name, value: point.asDouble ?? (point.asInt === undefined ? point.count === undefined ? undefined : Number(point.count) : Number(point.asInt)) })
          }
        }
      }
      posts.push(post)
      res.writeHead(200, { 'content-type': contentType.startsWith('application/json') ? 'application/json' : 'application/x-protobuf' })
      res.end(contentType.startsWith('application/json') ? '{}' : '')
      for (const waiter of [...waiters]) waiter()
    })
  })
  const port = await listenOn(node, 0, '127.0.0.1')
  cleanup.push(() => closeServer(node))
  return {
    endpoint: `http://127.0.0.1:${port}`,
    spans, points, posts,
    /** Resolves with what `read` returns once it is not undefined (read now, then after each POST). */
    until<T>(read: () => T | undefined): Promise<T> {
      return new Promise(resolve => {
        const check = () => {
          const value = read()
          if (value === undefined) return
          waiters.delete(check)
          resolve(value)
        }
        waiters.add(check)
        check()
      })
    },
  }
}

/** OTEL_* variables pointing a process at the receiver. */
function otelEnv(endpoint: string, service: string, protocol = 'http/json'): Record<string, string> {
  return {
    OTEL_SERVICE_NAME: service,
    OTEL_EXPORTER_OTLP_ENDPOINT: endpoint,
    OTEL_EXPORTER_OTLP_PROTOCOL: protocol,
    OTEL_TRACES_EXPORTER: 'otlp',
    OTEL_METRICS_EXPORTER: 'otlp',
    OTEL_LOGS_EXPORTER: 'none',
    // Spans go out at once; metrics only when the process stops (the SDK's final flush).
    OTEL_BSP_SCHEDULE_DELAY: '20',
    OTEL_METRIC_EXPORT_INTERVAL: '600000',
  }
}

/** A process of ours (`node --import tsx ...`); resolves its URL once its stderr names it. */
function run(args: string[], env: Record<string, string>, pattern: RegExp) {
  const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', ...args], { cwd: root, stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, ...env } })
  let log = ''
  const exited = new Promise<number | string>(resolve => child.once('exit', (code, signal) => resolve(code ?? signal ?? 'unknown')))
  cleanup.push(async () => { if (child.exitCode === null && child.signalCode === null) { child.kill('SIGKILL'); await exited } })
  const url = new Promise<string>((resolve, reject) => {
    child.stderr!.on('data', chunk => {
      log += chunk
      const match = pattern.exec(log)
      if (match) resolve(match[1]!)
    })
    void exited.then(code => reject(new Error(`${args.join(' ')} exited ${code}: ${log}`)))
  })
  url.catch(() => {})
  return { child, url, exited, log: () => log }
}

/** Our client with a tracer provider of its own (in memory), so its CLIENT span joins the collected ones. */
async function tracedClient(url: string, era: 'modern' | 'legacy' | 'auto' = 'auto') {
  const exporter = new InMemorySpanExporter()
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] })
  const client = await connect(httpClient(url), { name: 'e2e-client', version: '1' }, { era, telemetry: { tracerProvider: provider } })
  cleanup.push(() => client.close())
  const spans = (): Span[] => exporter.getFinishedSpans().map(span => ({
    service: 'e2e-client', name: span.name, kind: span.kind + 1, // the API's SpanKind is OTLP's less one
    traceId: span.spanContext().traceId, spanId: span.spanContext().spanId, parentSpanId: span.parentSpanContext?.spanId, attributes: { ...span.attributes },
  }))
  return { client, spans }
}

/** Resolves once the client's server offers the tool: listed after the listen stream is acknowledged, and again on each list change. */
function toolOffered(client: McpClient, name: string): Promise<unknown> {
  return firstValueFrom(client.listen({ toolsListChanged: true }).pipe(
    concatMap(() => client.listTools()),
    filter(result => result.tools.some(tool => tool.name === name)),
  ))
}

const EVERYTHING_URL = /Streamable HTTP at (http:\/\/\S+\/mcp)/
const SERVED_URL = /(?:serving|served at) (http:\/\/\S+\/mcp)/

describe('issue 25: one trace through real processes, exported over OTLP/HTTP', { timeout: 90_000 }, () => {
  it.each(['modern', 'legacy'] as const)('client (%s era) -> rxmcp gateway -> everything server: every span in one trace, linked by parent ids; SIGTERM flushes the last metrics', async era => {
    const otlp = await receiver()
    const everything = run(['examples/telemetry/server.ts', '0'], otelEnv(otlp.endpoint, 'e2e-everything'), EVERYTHING_URL)
    const directory = await mkdtemp(join(tmpdir(), 'rxmcp-otel-'))
    cleanup.push(() => rm(directory, { recursive: true, force: true }))
    const config = join(directory, 'mcp.json')
    await writeFile(config, JSON.stringify({ mcpServers: { everything: { type: 'http', url: await everything.url } } }))
    const gateway = run(['bin/rxmcp.ts', 'gateway', '--config', config, '--port', '0'], otelEnv(otlp.endpoint, 'e2e-gateway'), SERVED_URL)
    const { client, spans: clientSpans } = await tracedClient(await gateway.url, era)
    expect(client.era).toBe(era)
    // The gateway offers the server's tools once its host listed them.
    await toolOffered(client, 'everything__echo')
    const result = await client.callTool('everything__echo', { text: 'traced' })
    expect(JSON.stringify(result)).toContain('traced')

    const call = clientSpans().find(span => span.name === 'tools/call everything__echo')!
    expect(call).toMatchObject({ kind: CLIENT, attributes: { 'gen_ai.tool.name': 'everything__echo' } })
    expect(call.parentSpanId).toBeUndefined()
    // The three spans of the call in the other processes, whatever trace they are in; then their links.
    const chain = await otlp.until(() => {
      const gatewayServer = otlp.spans.find(span => span.service === 'e2e-gateway' && span.kind === SERVER && span.name === 'tools/call everything__echo')
      const gatewayClient = otlp.spans.find(span => span.service === 'e2e-gateway' && span.kind === CLIENT && span.name === 'tools/call echo')
      const server = otlp.spans.find(span => span.service === 'e2e-everything' && span.kind === SERVER && span.name === 'tools/call echo')
      return gatewayServer && gatewayClient && server ? { gatewayServer, gatewayClient, server } : undefined
    })
    expect(chain.gatewayServer).toMatchObject({ traceId: call.traceId, parentSpanId: call.spanId })
    expect(chain.gatewayClient).toMatchObject({ traceId: call.traceId, parentSpanId: chain.gatewayServer.spanId })
    expect(chain.server).toMatchObject({ traceId: call.traceId, parentSpanId: chain.gatewayClient.spanId })
    expect(chain.gatewayServer).toMatchObject({ name: 'tools/call everything__echo', attributes: { 'mcp.method.name': 'tools/call', 'gen_ai.tool.name': 'everything__echo', 'network.transport': 'tcp' } })
    // A legacy session's id is on its spans; a modern request belongs to no session.
    expect(chain.gatewayServer.attributes['mcp.session.id'] !== undefined).toBe(era === 'legacy')
    expect(chain.gatewayClient).toMatchObject({ name: 'tools/call echo', attributes: { 'gen_ai.tool.name': 'echo' } })
    expect(chain.server).toMatchObject({ name: 'tools/call echo', attributes: { 'mcp.method.name': 'tools/call', 'gen_ai.tool.name': 'echo', 'gen_ai.operation.name': 'execute_tool' } })

    // Stopped: each process exports its metrics (held back until now) before it exits.
    gateway.child.kill('SIGTERM')
    everything.child.kill('SIGTERM')
    expect(await gateway.exited).toBe(0)
    expect(await everything.exited).toBe(0)
    await otlp.until(() => ['e2e-gateway', 'e2e-everything'].every(service =>
      otlp.points.some(point => point.service === service && point.name === 'mcp.server.operation.duration')) || undefined)
    expect(otlp.points.some(point => point.service === 'e2e-gateway' && point.name === 'mcp.client.operation.duration')).toBe(true)
  })

  it('client -> rxmcp bridge -> a stdio child: the trace reaches the child through _meta untouched; the bridge reports its children', async () => {
    const otlp = await receiver()
    // The bridge's metrics every 200 ms: its gauge is read while the session's child runs.
    const env = { ...otelEnv(otlp.endpoint, 'e2e-bridge'), OTEL_METRIC_EXPORT_INTERVAL: '200' }
    // Children get a minimal environment: the OTEL_* variables are passed on by --env.
    const childEnv = Object.entries(otelEnv(otlp.endpoint, 'e2e-stdio-child')).flatMap(([name, value]) => ['--env', `${name}=${value}`])
    const bridge = run(['bin/rxmcp.ts', 'bridge', '--port', '0', ...childEnv, '--', process.execPath, '--import', 'tsx', 'examples/telemetry/server.ts', '--stdio'], env, SERVED_URL)
    const { client, spans: clientSpans } = await tracedClient(await bridge.url)
    await client.callTool('add', { a: 2, b: 3 })
    const call = clientSpans().find(span => span.name === 'tools/call add')!
    expect(call.kind).toBe(CLIENT)
    const server = await otlp.until(() => otlp.spans.find(span => span.service === 'e2e-stdio-child' && span.kind === SERVER && span.name === 'tools/call add'))
    expect(server).toMatchObject({ traceId: call.traceId, parentSpanId: call.spanId, attributes: { 'network.transport': 'pipe', 'gen_ai.tool.name': 'add' } })
    // The bridge makes no span of its own: it passes messages on.
    expect(otlp.spans.filter(span => span.service === 'e2e-bridge')).toEqual([])

    // The gauge counts the child while it runs, and none once it is gone.
    const children = () => otlp.points.filter(point => point.service === 'e2e-bridge' && point.name === 'rxmcp.bridge.children').map(point => point.value)
    await otlp.until(() => children().includes(1) || undefined)
    await client.close()
    await otlp.until(() => children().slice(children().indexOf(1)).includes(0) || undefined)
    bridge.child.kill('SIGTERM')
    expect(await bridge.exited).toBe(0)
  })

  it('exports over http/protobuf when OTEL_EXPORTER_OTLP_PROTOCOL says so', async () => {
    const otlp = await receiver()
    const everything = run(['examples/telemetry/server.ts', '0'], otelEnv(otlp.endpoint, 'e2e-protobuf', 'http/protobuf'), EVERYTHING_URL)
    const { client } = await tracedClient(await everything.url)
    await client.callTool('echo', { text: 'protobuf' })
    const post = await otlp.until(() => otlp.posts.find(post => post.path === '/v1/traces'))
    expect(post.contentType).toBe('application/x-protobuf')
    expect(post.bytes).toBeGreaterThan(0)
    everything.child.kill('SIGTERM')
    expect(await everything.exited).toBe(0)
    const metrics = await otlp.until(() => otlp.posts.find(post => post.path === '/v1/metrics'))
    expect(metrics).toMatchObject({ contentType: 'application/x-protobuf' })
    expect(metrics.bytes).toBeGreaterThan(0)
  })
})
