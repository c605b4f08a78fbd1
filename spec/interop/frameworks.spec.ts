/**
 * Issue 23: the everything server behind Express 5, Fastify 5 and Hono (examples/frameworks/), each
 * example run as a child process the way a user runs it (`node --import tsx <example> PORT`). Each is
 * held to the everything contract with the official SDK clients of both eras, and to what the
 * node:http listener (the baseline, in this process) does: a POST's SSE answer streamed before it
 * ends and resumed with Last-Event-ID, the standalone GET stream, DELETE, a foreign Origin. Some
 * bodies a framework refuses before MCP sees them; the table says which, and what it answers.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { request as httpRequest, type IncomingMessage } from 'node:http'
import { createInterface } from 'node:readline'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createEverythingServer } from '../../examples/everything/everything.ts'
import { freeLoopbackPort } from '../../examples/cluster/spawn-nginx.ts'
import { createSseParser, type SseEvent } from '../../lib/codec/sse.ts'
import { STREAMABLE_HTTP_DEFAULTS, streamableHttp } from '../../transports/streamable-http.ts'
import { describeEverythingContract } from '../helpers/everything-contract.ts'
import { ACCEPT, post } from '../helpers/hardening-http.ts'

type FrameworkName = 'express' | 'fastify' | 'hono'

/** What the framework, not MCP, answers to a body it refuses itself; 'mcp' when MCP answers as the node:http listener does. */
type Answer = 'mcp' | { status: number; contentType: RegExp; body: RegExp }

/** One framework's row: what it answers where it stands between the client and MCP. */
interface Framework {
  name: FrameworkName
  /** A body that is not JSON. */
  unreadable: Answer
  /** A body declared larger than the limit (the frameworks' limits are set to rxmcp's maxBodyBytes). */
  tooLarge: Answer
  /** It answers a body over the limit only once it has read (and dropped) the whole of it. */
  readsWholeBody?: boolean
}

const FRAMEWORKS: readonly Framework[] = [
  // express.json() refuses both before the route runs; the example hands unreadable JSON on to MCP,
  // and leaves 413 to Express's error page (HTML, with the stack unless NODE_ENV=production), which
  // finalhandler writes only once the request's body has been read to its end.
  { name: 'express', unreadable: 'mcp', tooLarge: { status: 413, contentType: /^text\/html/, body: /PayloadTooLargeError|Payload Too Large/ }, readsWholeBody: true },
  // Fastify's JSON parser answers with Fastify's JSON error before the route runs.
  {
    name: 'fastify',
    unreadable: { status: 400, contentType: /^application\/json/, body: /"code":"FST_ERR_CTP_INVALID_JSON_BODY"/ },
    tooLarge: { status: 413, contentType: /^application\/json/, body: /"code":"FST_ERR_CTP_BODY_TOO_LARGE"/ },
  },
  // Hono leaves the body unread: MCP reads it, so every answer is the node:http listener's.
  { name: 'hono', unreadable: 'mcp', tooLarge: 'mcp' },
]

/** tsx's loader, resolved from here so the child finds it whatever its working directory. */
const TSX = import.meta.resolve('tsx')
/** Bound on a child printing its URL: a cold tsx compile on a loaded machine included. */
const START_TIMEOUT_MS = 60_000
/** Bound on any one HTTP exchange or stream of these tests. */
const EXCHANGE_TIMEOUT_MS = 20_000
const VERSION = '2025-11-25'

/** An example running as a child process. */
interface Child {
  readonly url: string
  readonly process: ChildProcess
  /** Ms from spawn to its URL line (tsx compiling the example included). */
  readonly startupMs: number
  /** Resolves with its exit code (or signal). */
  readonly exited: Promise<number | string>
  /** Everything it wrote to stderr (read all along, so its pipe never fills). */
  readonly stderr: string[]
}

/** Spawns examples/frameworks/<name>.ts on a free port and resolves once it prints its URL (bounded). */
async function startExample(name: FrameworkName): Promise<Child> {
  const port = await freeLoopbackPort()
  const script = fileURLToPath(new URL(`../../examples/frameworks/${name}.ts`, import.meta.url))
  const started = performance.now()
  const child = spawn(process.execPath, ['--import', TSX, script, String(port)], { stdio: ['ignore', 'ignore', 'pipe'] })
  const exited = new Promise<number | string>(resolve => child.once('exit', (code, signal) => resolve(code ?? signal ?? 'unknown')))
  process.once('exit', () => child.kill('SIGKILL'))
  const stderr: string[] = []
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${name} printed no URL in ${START_TIMEOUT_MS} ms:\n${stderr.join('\n')}`)), START_TIMEOUT_MS)
    createInterface({ input: child.stderr! }).on('line', line => {
      stderr.push(line)
      const printed = /(http:\/\/127\.0\.0\.1:\d+\/mcp)$/.exec(line)
      if (printed !== null) { clearTimeout(timer); resolve(printed[1]!) }
    })
    void exited.then(code => { clearTimeout(timer); reject(new Error(`${name} exited (${code}) before printing its URL:\n${stderr.join('\n')}`)) })
  })
  expect(url).toBe(`http://127.0.0.1:${port}/mcp`)
  return { url, process: child, startupMs: performance.now() - started, exited, stderr }
}

/** SIGTERM, then SIGKILL if it has not exited within the bound; resolves with how it exited. */
async function stopExample(child: Child): Promise<number | string> {
  if (child.process.exitCode === null && child.process.signalCode === null) child.process.kill('SIGTERM')
  const timer = setTimeout(() => child.process.kill('SIGKILL'), 10_000)
  const how = await child.exited
  clearTimeout(timer)
  return how
}

const children = new Map<FrameworkName, Child>()
const example = (name: FrameworkName) => children.get(name)!
// The baseline: the everything server on the node:http listener, in this process.
const baselineServer = createEverythingServer()
const baseline = streamableHttp()

beforeAll(async () => {
  const started = await Promise.allSettled([...FRAMEWORKS.map(async ({ name }) => children.set(name, await startExample(name))), baselineServer.listen(baseline)])
  const failed = started.find(outcome => outcome.status === 'rejected')
  if (failed !== undefined) throw (failed as PromiseRejectedResult).reason
  console.log(`frameworks: spawn to URL line (tsx compile included, the three in parallel): ${[...children].map(([name, child]) => `${name} ${child.startupMs.toFixed(0)} ms`).join(', ')}`)
}, START_TIMEOUT_MS + 10_000)

afterAll(async () => {
  await Promise.all([...children.values()].map(stopExample))
  await baselineServer.close()
})

const signal = () => AbortSignal.timeout(EXCHANGE_TIMEOUT_MS)

/** A JSON-RPC message of an SSE event; undefined for a priming event (no data). */
const messageOf = (event: SseEvent | undefined): any => event === undefined || event.data === '' ? undefined : JSON.parse(event.data)

/** An SSE answer read one event at a time. */
function sseReader(response: Response) {
  const reader = response.body!.getReader()
  const decoder = new TextDecoder()
  const arrived: SseEvent[] = []
  const parser = createSseParser(event => arrived.push(event))
  return {
    /** Reads up to the first event `match` accepts, passing over the ones before it; undefined if the stream ends first. */
    async next(match: (event: SseEvent) => boolean): Promise<SseEvent | undefined> {
      for (;;) {
        while (arrived.length > 0) {
          const event = arrived.shift()!
          if (match(event)) return event
        }
        const { done, value } = await reader.read()
        if (done) return undefined
        parser.write(decoder.decode(value, { stream: true }))
      }
    },
    /** Resolves once the server ends the stream (what comes before is read and dropped). */
    async end(): Promise<void> {
      for (;;) if ((await reader.read()).done) return
    },
    /** The client leaves the stream (its connection goes). */
    cancel: () => reader.cancel(),
  }
}

/** Initializes a legacy session (a client that can elicit) and gives the headers of its later requests. */
async function openSession(url: string): Promise<Record<string, string>> {
  const answer = await post(url, { jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: VERSION, capabilities: { elicitation: {} }, clientInfo: { name: 'frameworks', version: '1' } } }, {}, signal())
  expect(answer.status).toBe(200)
  // The framework parsed this body (express.json(), Fastify's parser): it is answered, not refused -32700.
  expect(messageOf(await sseReader(answer).next(event => messageOf(event)?.id === 0)).result.serverInfo.name).toBe('rxmcp-everything')
  const headers = { 'mcp-session-id': answer.headers.get('mcp-session-id')!, 'mcp-protocol-version': VERSION }
  expect((await post(url, { jsonrpc: '2.0', method: 'notifications/initialized' }, headers, signal())).status).toBe(202)
  return headers
}

/** Sends one request on a session and gives its result (read from the POST's SSE answer). */
async function call(url: string, headers: Record<string, string>, id: number, method: string, params: object): Promise<any> {
  const answer = await post(url, { jsonrpc: '2.0', id, method, params }, headers, signal())
  expect(answer.status).toBe(200)
  const message = messageOf(await sseReader(answer).next(event => messageOf(event)?.id === id))
  expect(message.error).toBeUndefined()
  return message.result
}

/** What answered a request: status, content type and body. */
interface Answered { status: number; contentType: string; body: string }

const answered = async (response: Response): Promise<Answered> =>
  ({ status: response.status, contentType: response.headers.get('content-type') ?? '', body: await response.text() })

/**
 * A POST declaring a body one byte over the limit. Unless `sendsBody`, none of it is sent: MCP and
 * Fastify check the declared length and answer at once, and no unread bytes are left for their
 * close to turn into a reset. Express answers only once it has read the whole body: it is sent then.
 */
async function declaredOverLimit(url: string, sendsBody = false): Promise<Answered> {
  const { hostname, port, pathname } = new URL(url)
  const headers = { 'content-type': 'application/json', accept: ACCEPT, 'content-length': String(STREAMABLE_HTTP_DEFAULTS.maxBodyBytes + 1) }
  const request = httpRequest({ host: hostname, port, path: pathname, method: 'POST', headers, signal: signal() })
  if (sendsBody) request.end(Buffer.alloc(STREAMABLE_HTTP_DEFAULTS.maxBodyBytes + 1, 0x20))
  else request.flushHeaders()
  const [response] = await once(request, 'response') as [IncomingMessage]
  // The server may close the connection after its answer, with the request's body still owed.
  request.on('error', () => {})
  response.setEncoding('utf8')
  let body = ''
  for await (const chunk of response) body += chunk
  request.destroy()
  return { status: response.statusCode!, contentType: response.headers['content-type'] ?? '', body }
}

/** Checks an answer: the node:http listener's own (`'mcp'`, compared with the baseline's) or the framework's. */
function expectAnswer(actual: Answered, expected: Answer, fromBaseline: Answered): void {
  if (expected === 'mcp') {
    expect({ status: actual.status, contentType: actual.contentType, body: JSON.parse(actual.body) })
      .toEqual({ status: fromBaseline.status, contentType: fromBaseline.contentType, body: JSON.parse(fromBaseline.body) })
  } else {
    expect(actual.status).toBe(expected.status)
    expect(actual.contentType).toMatch(expected.contentType)
    expect(actual.body).toMatch(expected.body)
  }
}

/** The example is still up and serving: a new session opens. */
async function expectServing(child: Child): Promise<void> {
  expect(child.process.exitCode).toBeNull()
  await openSession(child.url)
}

for (const { name } of FRAMEWORKS) {
  describe(`examples/frameworks/${name}.ts`, () => {
    describeEverythingContract(`behind ${name}`, () => new URL(example(name).url))

    it('streams a POST\'s answer before it ends, and resumes it with Last-Event-ID after the client left', async () => {
      const { url } = example(name)
      const headers = await openSession(url)
      const answer = await post(url, { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'elicit', arguments: {} } }, headers, signal())
      expect(answer.headers.get('content-type')).toBe('text/event-stream')
      const stream = sseReader(answer)
      // The tool waits for this request's answer: it came through the framework while the POST's answer was still open.
      const asked = await stream.next(event => messageOf(event)?.method === 'elicitation/create')
      expect(asked?.id).toEqual(expect.any(String))
      await stream.cancel()
      // Resumed before the answer is sent, so the result goes to the resumed stream whether or not the server saw the old one close.
      const resumed = await fetch(url, { headers: { ...headers, accept: 'text/event-stream', 'last-event-id': asked!.id! }, signal: signal() })
      expect(resumed.status).toBe(200)
      const rest = sseReader(resumed)
      const content = { name: 'Ada', age: 36, color: 'red', extras: [] }
      expect((await post(url, { jsonrpc: '2.0', id: messageOf(asked).id, result: { action: 'accept', content } }, headers, signal())).status).toBe(202)
      const result = await rest.next(event => messageOf(event)?.id === 1)
      expect(messageOf(result).result.structuredContent).toEqual({ action: 'accept', content })
      // Every request of the POST is answered: the stream ends.
      await rest.end()
    }, 30_000)

    it('delivers to the standalone GET stream, and DELETE ends the session and its stream', async () => {
      const { url } = example(name)
      const headers = await openSession(url)
      const opened = await fetch(url, { headers: { ...headers, accept: 'text/event-stream' }, signal: signal() })
      expect(opened.status).toBe(200)
      expect(opened.headers.get('content-type')).toBe('text/event-stream')
      const stream = sseReader(opened)
      // 2025-11-25 (SEP-1699): the stream starts with an event id to resume from and no message.
      expect(await stream.next(() => true)).toMatchObject({ id: expect.any(String), data: '' })
      await call(url, headers, 1, 'resources/subscribe', { uri: 'everything://items/7' })
      await call(url, headers, 2, 'tools/call', { name: 'touch', arguments: { uri: 'everything://items/7' } })
      const updated = await stream.next(event => messageOf(event)?.method === 'notifications/resources/updated')
      expect(messageOf(updated).params).toEqual({ uri: 'everything://items/7' })
      expect((await fetch(url, { method: 'DELETE', headers, signal: signal() })).status).toBe(200)
      await stream.end()
      expect((await post(url, { jsonrpc: '2.0', id: 3, method: 'ping' }, headers, signal())).status).toBe(404)
    }, 30_000)

    it('serves a 2 MiB request: the framework\'s body limit is rxmcp\'s, not its own default', async () => {
      const { url } = example(name)
      const headers = await openSession(url)
      const text = 'x'.repeat(2 * 1024 * 1024)
      const result = await call(url, headers, 1, 'tools/call', { name: 'echo', arguments: { text } })
      expect(result.content[0].text).toHaveLength(text.length)
    }, 30_000)
  })
}

describe.each(FRAMEWORKS)('bodies MCP refuses, behind $name', framework => {
  it(`unreadable JSON: ${framework.unreadable === 'mcp' ? 'MCP answers as the node:http listener does' : 'the framework answers itself'}`, async () => {
    const child = example(framework.name)
    const body = '{"jsonrpc":"2.0","id":1,'
    expectAnswer(await answered(await post(child.url, body, {}, signal())), framework.unreadable, await answered(await post(baseline.url!, body, {}, signal())))
    await expectServing(child)
  }, 30_000)

  it(`a body declared over the limit: ${framework.tooLarge === 'mcp' ? 'MCP answers 413 as the node:http listener does' : 'the framework answers 413 itself'}`, async () => {
    const child = example(framework.name)
    expectAnswer(await declaredOverLimit(child.url, framework.readsWholeBody), framework.tooLarge, await declaredOverLimit(baseline.url!))
    await expectServing(child)
  }, 30_000)

  it('a foreign Origin: MCP answers 403 as the node:http listener does', async () => {
    const child = example(framework.name)
    const body = { jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: VERSION, capabilities: {}, clientInfo: { name: 'page', version: '1' } } }
    const foreign = { origin: 'https://evil.example' }
    const fromBaseline = await answered(await post(baseline.url!, body, foreign, signal()))
    expect(fromBaseline.status).toBe(403)
    expectAnswer(await answered(await post(child.url, body, foreign, signal())), 'mcp', fromBaseline)
    await expectServing(child)
  }, 30_000)
})

describe('stopping', () => {
  it.each(FRAMEWORKS.map(({ name }) => name))('%s exits 0 on SIGTERM', async name => {
    expect(await stopExample(example(name))).toBe(0)
  }, 30_000)
})
