/**
 * `npm run bench`: the echo tool over stdio, rxmcp against the official SDK, in one process.
 *
 * - Servers: one lean raw driver (raw-driver.ts: JSON lines written and parsed by hand, the same
 *   code for both) keeps exactly N tools/call requests in flight against the rxmcp everything
 *   server and against an official McpServer (official-echo-server.ts), and against a floor with no
 *   MCP library (stdio-floor-server.ts) to read both against. Server CPU comes from
 *   /proc/<pid>/stat (utime + stime, in CLK_TCK ticks) read around the measured window.
 * - Clients: rxmcp's client (connect + stdioClient + callTool) and the official Client
 *   (+ StdioClientTransport + callTool) keep N calls in flight against the same rxmcp everything
 *   server; client CPU is this process's cpuUsage() around the measured window.
 * Every run is a warmup, then a measured window. Runs alternate (A, B, then B, A, ...) so machine
 * noise hits both sides, and the median of the rounds is reported.
 *
 * Environment:
 *   BENCH_SECONDS  measured window of each run (default 3)
 *   BENCH_WARMUP   warmup of each run in seconds (default 1)
 *   BENCH_ROUNDS   rounds per comparison (default 3; the median is reported)
 *   BENCH_BEFORE   a git revision: the stdio server runs add that tree's everything server as `before`
 *                  (checked out once under the temporary directory, see before-tree.ts) and print rxmcp/before
 *   BENCH_ONLY     runs or groups, comma separated (default `stdio,modern,startup`): server-1 server-64
 *                  client-1 client-64 stdio-10mib stdio-10mib-text, http-1-1 http-64-1 http-64-16 http-memory http-client-1 http-client-64, web-http-64-16
 *                  web-modern-64 (group `web`: the web handler against the node:http listener), ws-1 ws-64
 *                  ws-big, modern-http-64 modern-stdio-64, cold footprint (footprint installs from the
 *                  npm registry), tasks, auth, host, gateway, redis, validator, telemetry-64; groups `stdio`, `http`, `web`, `ws`, `modern`, `startup`, `tasks`, `auth`, `host`, `gateway`,
 *                  `redis`, `validator`, `telemetry`, `all`. The default run (`stdio,modern,startup,validator`) takes about 5 minutes.
 *
 * The HTTP rows (legacy http-*, and modern-http-64) put rxmcp beside a server with no MCP library,
 * http-floor-server.ts (node:http and JSON: sessions minted and checked, one JSON body per request),
 * and print rxmcp/floor with issue 24's target (at least 0.8x at 64 in flight).
 *
 * The `modern` group (modern-bench.ts) calls the echo tool in the 2026-07-28 era, statelessly, 64 in
 * flight: rxmcp's everything server against the official SDK v2 server (sdk-v2-echo-server.ts), over
 * Streamable HTTP (raw POSTs with the 2026-07-28 headers and `_meta`) and over stdio (the raw driver
 * writing the same requests), each server in its own child.
 * Results go to .bench/results.json, the chart (chart.ts) to .bench/chart.svg and to the file
 * BENCH_CHART names (`BENCH_CHART=docs/bench.svg`, the one README shows). Every child is killed at the end, also on error or Ctrl-C.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process'
import { mkdirSync, writeFileSync } from 'node:fs'
import { renderChart } from './chart.ts'
import { COLD_START_TARGET, runColdStart, runFootprint } from './startup.ts'
import { cpus, loadavg } from 'node:os'
import { fileURLToPath } from 'node:url'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { WebSocket } from 'ws'
import { connect } from '../../actors/client.ts'
import { stdioClient } from '../../transports/stdio.ts'
import { streamableHttpClient } from '../../transports/http-client.ts'
import { decodeMsgpackFrame, encodeMsgpack, loadMsgpack } from '../../lib/codec/msgpack.ts'
import { idleSessionHeap, idleSessionRss, openSession, post, printHolders, startHttpServer } from './http-bench.ts'

/** Issue 24's memory measure: 1,000 idle sessions (10 warm, not counted); issue 8's minimal server, 4,000. */
const IDLE_SESSIONS = 1000
const IDLE_SESSIONS_MINIMAL = 4000
import { CLOCK_TICKS, installCleanup, killChildren, processCpuMs, rss, selfCpuMs, within } from './procs.ts'
import { RawDriver, type RawResponse } from './raw-driver.ts'
import { modernEchoParams, postModern, startModernHttp, startModernStdio, type ModernSide } from './modern-bench.ts'
import { runTasksBench } from './tasks-bench.ts'
import { runAuthBench } from './auth-bench.ts'
import { runHostBench } from './host-bench.ts'
import { runGatewayBench } from './gateway-bench.ts'
import { runRedisBench } from './redis-bench.ts'
import { formatValidatorRows, runValidatorBench } from './validator-bench.ts'
import { beforeTree } from './before-tree.ts'
import { serverArgs } from './built.ts'

installCleanup()
await loadMsgpack()

const root = fileURLToPath(new URL('../..', import.meta.url))
/** A snapshot of an older tree to read the stdio server against (BENCH_BEFORE, see before-tree.ts). */
const BEFORE = beforeTree(root)
const SECONDS = Number(process.env.BENCH_SECONDS ?? 3)
const WARMUP_MS = Number(process.env.BENCH_WARMUP ?? 1) * 1000
const ROUNDS = Math.max(1, Number(process.env.BENCH_ROUNDS ?? 3))
/** How long the calls in flight at the end of a window may take to come back. */
const DRAIN_MS = 10_000
const START_MS = 20_000
const TEXT = 'hello'
const ECHO_PARAMS = { name: 'echo', arguments: { text: TEXT } }
const ECHO_PARAMS_JSON = JSON.stringify(ECHO_PARAMS)

/** The stdio servers: node runs them directly (no npx in between), so the pid is the server's. */
const SERVERS = {
  rxmcp: ['--import', 'tsx', 'examples/everything/server.ts'],
  official: ['--import', 'tsx', 'spec/bench/official-echo-server.ts'],
  // fastmcp, the TypeScript framework (fastmcp-echo-server.ts).
  fastmcp: ['--import', 'tsx', 'spec/bench/fastmcp-echo-server.ts', 'stdio'],
  // No MCP library at all: what pipes, wake-ups and JSON cost here (read the others against it).
  floor: ['--import', 'tsx', 'spec/bench/stdio-floor-server.ts'],
  // The everything server of the BENCH_BEFORE tree, run from that tree.
  before: ['--import', 'tsx', 'examples/everything/server.ts'],
  // The everything server with telemetry on: a real SDK, spans batched to an exporter that drops them,
  // metrics recorded and never collected (rxmcp-telemetry-server.ts).
  'rxmcp-telemetry': ['--import', 'tsx', 'spec/bench/rxmcp-telemetry-server.ts'],
} as const

const GROUPS: Record<string, readonly string[]> = {
  stdio: ['server-1', 'server-64', 'client-1', 'client-64', 'stdio-10mib', 'stdio-10mib-text'],
  http: ['http-1-1', 'http-64-1', 'http-64-16', 'http-memory', 'http-client-1', 'http-client-64'],
  ws: ['ws-1', 'ws-64', 'ws-big'],
  // The web handler (rxmcp/web) on Node behind @hono/node-server against the node:http listener, both eras.
  web: ['web-http-64-16', 'web-modern-64'],
  // The 2026-07-28 era, stateless: rxmcp against the official SDK v2 server (modern-bench.ts).
  modern: ['modern-http-64', 'modern-stdio-64'],
  // Startup (spec/bench/startup.ts): spawn -> initialize answered; install footprint (needs the npm registry).
  startup: ['cold', 'footprint'],
  // Tasks (tasks-bench.ts): a call as a task against the same call made plainly, in one process.
  tasks: ['tasks'],
  // Auth (auth-bench.ts): tools/call over HTTP with bearer-token checking against the same without, in one process.
  auth: ['auth'],
  // Host (host-bench.ts): tools/call through the gateway against direct, and the heap per supervised client.
  host: ['host'],
  // Gateway (gateway-bench.ts, issue 26): calls/s and CPU per call of each process, direct against through `rxmcp gateway`, both eras on its front, stdio and HTTP behind it.
  gateway: ['gateway'],
  // Redis (redis-bench.ts): the Redis mode against the in-memory one, three instances behind nginx, and what Redis holds per event and task.
  redis: ['redis'],
  // JSON Schema (validator-bench.ts): ns per validation and per compile, compiled (ajv) against interpreted (@cfworker/json-schema).
  validator: ['validator'],
  // Telemetry (issue 25): the stdio server with OpenTelemetry on against the same server with it off.
  telemetry: ['telemetry-64'],
}
GROUPS.all = [...GROUPS.stdio!, ...GROUPS.http!, ...GROUPS.web!, ...GROUPS.ws!, ...GROUPS.modern!, ...GROUPS.startup!, ...GROUPS.tasks!, ...GROUPS.auth!, ...GROUPS.host!, ...GROUPS.gateway!, ...GROUPS.redis!, ...GROUPS.validator!, ...GROUPS.telemetry!]
const selected = new Set((process.env.BENCH_ONLY ?? 'stdio,modern,startup,validator').split(',').map(key => key.trim()).filter(Boolean).flatMap(key => GROUPS[key] ?? [key]))
const isSelected = (key: string) => selected.has(key)

// ---------------------------------------------------------------------------------------------
// Measuring
// ---------------------------------------------------------------------------------------------

/** One run's figures. Latencies in ms, CPU in µs per call. */
interface Measure {
  calls: number
  callsPerSecond: number
  p50: number
  p99: number
  /** CPU of the side under test (the server in server runs, this process in client runs). */
  cpuPerCall: number
  /** CPU of the other side (this driver in server runs, the server in client runs). */
  peerCpuPerCall: number
}

/** Starts one call; `done` is called once, with an error if the call failed or its answer was wrong. */
type Call = (done: (error?: Error) => void) => void

function percentile(sorted: Float64Array, p: number): number {
  return sorted.length === 0 ? 0 : sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]!
}

/**
 * Keeps exactly `inFlight` calls going: each completion starts the next. After the warmup, a window
 * of SECONDS is measured (calls completed in it, their latencies, and both CPU counters); then no
 * new call starts and the run ends when the calls in flight are back (at most DRAIN_MS).
 */
function drive(inFlight: number, call: Call, cpu: () => number, peerCpu: () => number): Promise<Measure> {
  return new Promise((resolve, reject) => {
    // Latencies of calls completed inside the window, in ms; grown by doubling.
    let latencies = new Float64Array(1 << 16)
    let count = 0
    let phase: 'warmup' | 'measure' | 'drain' = 'warmup'
    let active = 0
    let failure: Error | undefined
    let windowStart = 0
    let elapsed = 0
    let cpuUsed = 0
    let peerCpuUsed = 0
    let cpuBefore = 0
    let peerCpuBefore = 0
    let drainTimer: NodeJS.Timeout | undefined
    let isFinished = false

    const finish = () => {
      if (isFinished) return
      isFinished = true
      clearTimeout(drainTimer)
      if (failure !== undefined) return reject(failure)
      const sorted = latencies.subarray(0, count).sort()
      resolve({
        calls: count,
        callsPerSecond: count / elapsed * 1000,
        p50: percentile(sorted, 0.5),
        p99: percentile(sorted, 0.99),
        cpuPerCall: cpuUsed / count * 1000,
        peerCpuPerCall: peerCpuUsed / count * 1000,
      })
    }
    const stop = () => {
      if (phase === 'drain') return
      if (phase === 'measure') {
        elapsed = performance.now() - windowStart
        cpuUsed = cpu() - cpuBefore
        peerCpuUsed = peerCpu() - peerCpuBefore
      }
      phase = 'drain'
      drainTimer = setTimeout(() => { failure ??= new Error(`${active} calls still in flight ${DRAIN_MS} ms after the window`); active = 0; finish() }, DRAIN_MS)
      if (active === 0) finish()
    }
    const launch = () => {
      active++
      const started = performance.now()
      call(error => {
        active--
        if (error !== undefined) {
          failure ??= error
          stop()
        } else if (phase === 'measure') {
          if (count === latencies.length) { const grown = new Float64Array(count * 2); grown.set(latencies); latencies = grown }
          latencies[count++] = performance.now() - started
        }
        if (phase !== 'drain') launch()
        else if (active === 0 && drainTimer !== undefined) finish()
      })
    }

    // A call that fails at once (the server is gone) ends the start too.
    const isDraining = () => phase === 'drain'
    for (let i = 0; i < inFlight && !isDraining(); i++) launch()
    setTimeout(() => {
      if (phase !== 'warmup') return
      phase = 'measure'
      cpuBefore = cpu()
      peerCpuBefore = peerCpu()
      windowStart = performance.now()
      setTimeout(stop, SECONDS * 1000)
    }, WARMUP_MS)
  })
}

/** An echo answer must carry the text back; anything else fails the run. */
function checkEcho(result: RawResponse['result'] | undefined): Error | undefined {
  const text = result?.content?.[0]?.text
  return text === TEXT && result?.isError !== true ? undefined : new Error(`unexpected echo result: ${JSON.stringify(result).slice(0, 200)}`)
}

/** Bounds a cleanup step, so a stuck child cannot hang the run (it is killed at exit anyway). */
async function settle(step: Promise<unknown>, label: string): Promise<void> {
  try { await within(step, 5_000, `${label} did not finish`) } catch (error) { console.error(`  (${label}: ${(error as Error).message})`) }
}

// ---------------------------------------------------------------------------------------------
// stdio: servers and clients
// ---------------------------------------------------------------------------------------------

type Side = 'rxmcp' | 'official' | 'floor' | 'fastmcp'

async function benchServer(name: keyof typeof SERVERS, inFlight: number): Promise<Measure> {
  const driver = new RawDriver(process.execPath, serverArgs(SERVERS[name], name === 'before' ? BEFORE!.dir : root), name === 'before' ? BEFORE!.dir : root)
  try {
    await driver.start(START_MS)
    const pid = driver.child.pid!
    const call: Call = done => driver.send('tools/call', ECHO_PARAMS_JSON, (error, message) =>
      done(error ?? (message!.error !== undefined ? new Error(`tools/call failed: ${JSON.stringify(message!.error)}`) : checkEcho(message!.result))))
    return await drive(inFlight, call, () => processCpuMs(pid), selfCpuMs)
  } finally {
    await settle(driver.stop(), `${name} server shutdown`)
  }
}

async function benchClient(name: Side, inFlight: number): Promise<Measure> {
  const info = { name: 'rxmcp-bench', version: '1' }
  if (name === 'rxmcp') {
    const transport = stdioClient({ command: process.execPath, args: serverArgs(SERVERS.rxmcp, root), cwd: root, stderr: 'inherit' })
    // The legacy era, as the official v1 client speaks it (by default the client would find the
    // everything server modern through server/discover, and the two would not do the same work).
    const client = await within(connect(transport, info, { era: 'legacy' }), START_MS, 'rxmcp client could not connect')
    try {
      const pid = transport.pid!
      const call: Call = done => client.callTool('echo', ECHO_PARAMS.arguments).then(result => done(checkEcho(result as RawResponse['result'])), done)
      return await drive(inFlight, call, selfCpuMs, () => processCpuMs(pid))
    } finally {
      await settle(client.close(), 'rxmcp client close')
    }
  }
  const transport = new StdioClientTransport({ command: process.execPath, args: serverArgs(SERVERS.rxmcp, root), cwd: root, stderr: 'inherit' })
  const client = new Client(info)
  await within(client.connect(transport), START_MS, 'official client could not connect')
  try {
    const pid = transport.pid!
    const call: Call = done => client.callTool({ name: 'echo', arguments: ECHO_PARAMS.arguments }).then(result => done(checkEcho(result as RawResponse['result'])), done)
    return await drive(inFlight, call, selfCpuMs, () => processCpuMs(pid))
  } finally {
    await settle(client.close(), 'official client close')
  }
}

/**
 * The client over Streamable HTTP: rxmcp's client (its default exchange on Node, `nodeFetch`), the
 * same client on the global fetch (`rxmcp-fetch`: what it cost before), and the official Client
 * (StreamableHTTPClientTransport), each against its own rxmcp HTTP echo server, in the legacy era;
 * client CPU is this process's.
 */
async function benchHttpClient(name: 'rxmcp' | 'rxmcp-fetch' | 'official', inFlight: number): Promise<Measure> {
  const info = { name: 'rxmcp-bench', version: '1' }
  const server = await startHttpServer('rxmcp')
  const pid = server.child.pid!
  try {
    if (name !== 'official') {
      const transport = streamableHttpClient(server.url, name === 'rxmcp-fetch' ? { fetch: (input, init) => globalThis.fetch(input, init) } : {})
      const client = await within(connect(transport, info, { era: 'legacy' }), START_MS, 'rxmcp client could not connect')
      try {
        const call: Call = done => client.callTool('echo', ECHO_PARAMS.arguments).then(result => done(checkEcho(result as RawResponse['result'])), done)
        return await drive(inFlight, call, selfCpuMs, () => processCpuMs(pid))
      } finally {
        await settle(client.close(), 'rxmcp client close')
      }
    }
    const client = new Client(info)
    await within(client.connect(new StreamableHTTPClientTransport(server.url)), START_MS, 'official client could not connect')
    try {
      const call: Call = done => client.callTool({ name: 'echo', arguments: ECHO_PARAMS.arguments }).then(result => done(checkEcho(result as RawResponse['result'])), done)
      return await drive(inFlight, call, selfCpuMs, () => processCpuMs(pid))
    } finally {
      await settle(client.close(), 'official client close')
    }
  } finally {
    server.child.kill()
  }
}

// ---------------------------------------------------------------------------------------------
// stdio: one 10 MiB echo round trip (a file sent as an argument and returned as the result)
// ---------------------------------------------------------------------------------------------

/** Bytes of the text echoed by the large round trip. */
const BIG_TEXT_BYTES = 10 * 1024 * 1024
/**
 * The text of the second large round trip: prose with quotes, newlines, tabs and non-ASCII, as a
 * file's contents are. `'x'.repeat` is the cheapest case for every step (JSON escaping, UTF-8, the
 * structure check's walk through strings); this one costs what real text costs.
 */
const BIG_TEXT_UNIT = 'She said "It\'s 5\u00b0C, f\u00fcr \u4e16\u754c", then left.\n\tA path: C:\\tmp\\x. '
/** Round trips timed per server (the median is reported); one more goes first, untimed. */
const BIG_TRIPS = 5
/** How long one large round trip may take before the server counts as failed. */
const BIG_TIMEOUT_MS = 60_000

/** One server's large round trips: the median in ms, or why they failed. */
interface BigTrip { ms?: number; all?: number[]; serverCpuMs?: number; failure?: string }

/**
 * Spawns a stdio server and drives it with raw JSON lines: the handshake, then echo calls carrying
 * `BIG_TEXT_BYTES` of text. Lines are assembled from Buffer chunks, scanning only new bytes for
 * the newline, so the driver's cost stays linear and the same for every server.
 */
async function bigRoundTrips(name: keyof typeof SERVERS, payload: 'ascii' | 'text' = 'ascii'): Promise<BigTrip> {
  const child = spawn(process.execPath, serverArgs(SERVERS[name], root), { cwd: root, stdio: ['pipe', 'pipe', 'inherit'] })
  child.stdin!.on('error', () => {})
  // Chunks of the line being read, and the waiter of each request id.
  let chunks: Buffer[] = []
  const waiting = new Map<number, (message: RawResponse) => void>()
  let exit: string | undefined
  const exited = new Promise<void>(resolve => child.once('exit', (code, signal) => { exit = `exited (${signal ?? `code ${code}`})`; resolve() }))
  child.stdout!.on('data', (chunk: Buffer) => {
    let start = 0
    let end: number
    while ((end = chunk.indexOf(0x0a, start)) >= 0) {
      chunks.push(chunk.subarray(start, end))
      const line = Buffer.concat(chunks)
      chunks = []
      start = end + 1
      if (line.length === 0) continue
      const message = JSON.parse(line.toString('utf8')) as RawResponse & { method?: string }
      if (message.method === undefined) waiting.get(message.id)?.(message)
    }
    if (start < chunk.length) chunks.push(chunk.subarray(start))
  })
  let nextId = 1
  const request = (method: string, params: object): Promise<RawResponse> => {
    const id = nextId++
    const answer = new Promise<RawResponse>(resolve => waiting.set(id, resolve))
    child.stdin!.write(`{"jsonrpc":"2.0","id":${id},"method":${JSON.stringify(method)},"params":${JSON.stringify(params)}}\n`)
    return within(Promise.race([answer, exited.then(() => { throw new Error(`server ${exit}`) })]), BIG_TIMEOUT_MS, `no answer within ${BIG_TIMEOUT_MS / 1000} s`)
  }
  try {
    await request('initialize', { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'rxmcp-bench', version: '1' } })
    child.stdin!.write('{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
    const text = payload === 'ascii' ? 'x'.repeat(BIG_TEXT_BYTES) : BIG_TEXT_UNIT.repeat(Math.ceil(BIG_TEXT_BYTES / BIG_TEXT_UNIT.length)).slice(0, BIG_TEXT_BYTES)
    const times: number[] = []
    // The server's CPU per trip: steadier than the time on a busy machine.
    const cpus: number[] = []
    for (let trip = 0; trip <= BIG_TRIPS; trip++) {
      const started = performance.now()
      const cpuBefore = processCpuMs(child.pid!)
      const answer = await request('tools/call', { name: 'echo', arguments: { text } })
      const elapsed = performance.now() - started
      if (trip > 0) cpus.push(processCpuMs(child.pid!) - cpuBefore)
      if (answer.error !== undefined) return { failure: `error ${answer.error.code}: ${answer.error.message.slice(0, 160)}` }
      if (answer.result?.content?.[0]?.text !== text) return { failure: `wrong answer: ${JSON.stringify(answer.result).slice(0, 160)}` }
      if (trip > 0) times.push(elapsed)
    }
    return { ms: median(times), all: times, serverCpuMs: median(cpus) }
  } catch (error) {
    return { failure: (error as Error).message }
  } finally {
    child.stdin!.end()
    await settle(within(exited, 3_000, 'lingering').catch(() => { child.kill('SIGKILL') }), `${name} shutdown`)
  }
}

// ---------------------------------------------------------------------------------------------
// Streamable HTTP and WebSocket (opt-in: BENCH_ONLY=http,ws or all)
// ---------------------------------------------------------------------------------------------

async function benchHttp(name: Side | 'before' | 'web', inFlight: number, sessions: number): Promise<Measure> {
  const { child, url } = name === 'before' ? await startHttpServer('rxmcp', BEFORE!.dir) : await startHttpServer(name)
  try {
    const ids = await Promise.all(Array.from({ length: sessions }, () => openSession(url)))
    let next = 0
    let id = 1
    const call: Call = done => {
      const session = ids[next++ % ids.length]!
      post(url, `{"jsonrpc":"2.0","id":${id++},"method":"tools/call","params":${ECHO_PARAMS_JSON}}`, session).then(
        answer => done(answer.text.includes(`"${TEXT}"`) ? undefined : new Error(`bad answer ${answer.status}: ${answer.text.slice(0, 200)}`)), done)
    }
    return await drive(inFlight, call, () => processCpuMs(child.pid!), selfCpuMs)
  } finally {
    child.kill('SIGKILL')
  }
}

/** Starts a WebSocket server child; resolves with its URL. */
async function startWs(args: string[], cwd = root): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, serverArgs(args, cwd), { cwd, stdio: ['ignore', 'pipe', 'inherit'] })
  const url = await within(new Promise<string>((resolve, reject) => {
    let seen = ''
    child.stdout!.on('data', chunk => { seen += chunk; const match = /(ws:\/\/\S+)/.exec(seen); if (match) resolve(match[1]!) })
    child.on('exit', code => reject(new Error(`exited ${code}: ${seen}`)))
  }), START_MS, 'the WebSocket server did not print its URL')
  return { child, url }
}

/** A raw WebSocket driver: JSON text or msgpack binary, requests matched by id. */
async function wsDriver(url: string, encoding: 'json' | 'msgpack') {
  const socket = new WebSocket(url, [encoding === 'msgpack' ? 'mcp.msgpack' : 'mcp'], { perMessageDeflate: false, maxPayload: 64 << 20 })
  await within(new Promise((resolve, reject) => { socket.once('open', resolve); socket.once('error', reject) }), START_MS, 'WebSocket did not open')
  const waiting = new Map<number, (message: any) => void>()
  socket.on('message', (data, isBinary) => {
    const message = isBinary ? (decodeMsgpackFrame(data as Buffer, 64 << 20) as { message: any }).message : JSON.parse(data.toString())
    waiting.get(message.id)?.(message)
    waiting.delete(message.id)
  })
  let nextId = 1
  const request = (method: string, params: object) => new Promise<any>(resolve => {
    const id = nextId++
    waiting.set(id, resolve)
    const message = { jsonrpc: '2.0', id, method, params }
    socket.send(encoding === 'msgpack' ? encodeMsgpack(message as never) : JSON.stringify(message))
  })
  await request('initialize', { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'bench', version: '1' } })
  const note = { jsonrpc: '2.0', method: 'notifications/initialized' }
  socket.send(encoding === 'msgpack' ? encodeMsgpack(note as never) : JSON.stringify(note))
  return { request, close: () => socket.close() }
}

type WsTarget = 'floor' | 'rxmcp-json' | 'rxmcp-msgpack' | 'before-json'
async function benchWs(target: WsTarget, inFlight: number): Promise<Measure> {
  const server = await startWs(target === 'floor' ? ['--import', 'tsx', 'spec/bench/ws-floor-server.ts'] : ['--import', 'tsx', 'spec/bench/rxmcp-ws-server.ts'],
    target === 'before-json' ? BEFORE!.dir : root)
  try {
    const driver = await wsDriver(server.url, target === 'rxmcp-msgpack' ? 'msgpack' : 'json')
    const call: Call = done => driver.request('tools/call', ECHO_PARAMS).then(message => done(checkEcho(message.result)), done)
    const result = await drive(inFlight, call, () => processCpuMs(server.child.pid!), selfCpuMs)
    driver.close()
    return result
  } finally {
    server.child.kill('SIGKILL')
  }
}

// ---------------------------------------------------------------------------------------------
// The modern era (2026-07-28): stateless echo calls, rxmcp against the official SDK v2 server
// ---------------------------------------------------------------------------------------------

const MODERN_ECHO_PARAMS_JSON = modernEchoParams(TEXT)

/** A modern answer: no JSON-RPC error, and the echo back. */
function checkModern(message: RawResponse): Error | undefined {
  return message.error !== undefined ? new Error(`tools/call failed: ${JSON.stringify(message.error)}`) : checkEcho(message.result)
}

async function benchModernHttp(side: ModernSide | 'before', inFlight: number): Promise<Measure> {
  return benchModernHttpOf(side === 'before' ? await startModernHttp('rxmcp', BEFORE!.dir) : await startModernHttp(side), inFlight)
}

/** Modern echo calls against the node:http listener (`rxmcp`) or the web handler behind @hono/node-server (`web`). */
async function benchWebModern(side: 'rxmcp' | 'web', inFlight: number): Promise<Measure> {
  return benchModernHttpOf(await startHttpServer(side), inFlight)
}

/** Modern echo calls, `inFlight` at a time, against a server child (killed after). */
async function benchModernHttpOf(started: { child: ChildProcess; url: URL } | Promise<{ child: ChildProcess; url: URL }>, inFlight: number): Promise<Measure> {
  const { child, url } = await started
  try {
    let id = 1
    const call: Call = done => { postModern(url, id++, 'tools/call', MODERN_ECHO_PARAMS_JSON, 'echo').then(message => done(checkModern(message)), done) }
    return await drive(inFlight, call, () => processCpuMs(child.pid!), selfCpuMs)
  } finally {
    child.kill('SIGKILL')
  }
}

async function benchModernStdio(side: ModernSide | 'before', inFlight: number): Promise<Measure> {
  const driver = side === 'before' ? await startModernStdio('rxmcp', START_MS, BEFORE!.dir) : await startModernStdio(side, START_MS)
  try {
    const pid = driver.child.pid!
    const call: Call = done => driver.send('tools/call', MODERN_ECHO_PARAMS_JSON, (error, message) => done(error ?? checkModern(message!)))
    return await drive(inFlight, call, () => processCpuMs(pid), selfCpuMs)
  } finally {
    await settle(driver.stop(), `${side} modern stdio server shutdown`)
  }
}

// ---------------------------------------------------------------------------------------------
// Rounds, medians, the table
// ---------------------------------------------------------------------------------------------

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b)
  const middle = sorted.length >> 1
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2
}

function medianMeasure(measures: Measure[]): Measure {
  const pick = (key: keyof Measure) => median(measures.map(measure => measure[key]))
  return {
    calls: pick('calls'), callsPerSecond: pick('callsPerSecond'), p50: pick('p50'), p99: pick('p99'),
    cpuPerCall: pick('cpuPerCall'), peerCpuPerCall: pick('peerCpuPerCall'),
  }
}

interface Comparison<K extends string> { median: Record<K, Measure>; rounds: Record<K, Measure[]> }

/** Runs every side ROUNDS times, alternating the order each round (A B, B A, A B, ...). */
async function alternate<K extends string>(names: readonly K[], run: (name: K) => Promise<Measure>, rounds = ROUNDS): Promise<Comparison<K>> {
  const all = Object.fromEntries(names.map(name => [name, [] as Measure[]])) as unknown as Record<K, Measure[]>
  for (let round = 0; round < rounds; round++) {
    for (const name of round % 2 === 0 ? names : [...names].reverse()) all[name].push(await run(name))
  }
  return { median: Object.fromEntries(names.map(name => [name, medianMeasure(all[name])])) as Record<K, Measure>, rounds: all }
}

const table: string[][] = []
const ratios: { label: string; ratio: number; target?: string; isMet?: boolean; unit?: string }[] = []
const report: Record<string, unknown> = {}

function addRows<K extends string>(run: string, cpuOf: string, comparison: Comparison<K>): void {
  for (const [name, m] of Object.entries(comparison.median) as [K, Measure][]) {
    table.push([run, name, m.callsPerSecond.toFixed(0), m.p50.toFixed(3), m.p99.toFixed(3), `${m.cpuPerCall.toFixed(1)} (${cpuOf})`, m.peerCpuPerCall.toFixed(1), String(m.calls), spreadOf(comparison.rounds[name])])
  }
  printTable(table.slice(-Object.keys(comparison.median).length), false)
}

/**
 * The noise of one side: the spread of its rounds' calls/s, (max - min) / median. A ratio between
 * two sides moves by about the larger of their spreads from one run to the next.
 */
function spreadOf(rounds: Measure[]): string {
  if (rounds.length < 2) return '-'
  const values = rounds.map(round => round.callsPerSecond)
  return `${((Math.max(...values) - Math.min(...values)) / median(values) * 100).toFixed(1)}%`
}

function printTable(rows: string[][], isWithHeader = true): void {
  const header = ['run', 'impl', 'calls/s', 'p50 ms', 'p99 ms', 'cpu µs/call (of)', 'other side µs/call', 'calls', 'spread']
  const widths = header.map((title, i) => Math.max(title.length, ...table.map(row => row[i]!.length)))
  const line = (row: string[]) => row.map((cell, i) => i < 2 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!)).join('  ')
  if (isWithHeader) console.log(`${line(header)}\n${widths.map(width => '-'.repeat(width)).join('  ')}`)
  for (const row of rows) console.log(line(row))
}

/** With BENCH_BEFORE: this tree's side against the before tree's, CPU per call and calls/s. */
function addBeforeRatios(label: string, median: Partial<Record<string, Measure>>, after = 'rxmcp', before = 'before'): void {
  const [now, then] = [median[after], median[before]]
  if (now === undefined || then === undefined) return
  addRatio(`${label} cpu/call after/before (${BEFORE!.commit.slice(0, 7)})`, now.cpuPerCall / then.cpuPerCall)
  addRatio(`${label} calls/s after/before (${BEFORE!.commit.slice(0, 7)})`, now.callsPerSecond / then.callsPerSecond)
}

/** A row of the ratios table; `unit` for the odd row that is a figure, not a ratio (`x` else). */
function addRatio(label: string, ratio: number, target?: { atLeast?: number; atMost?: number }, unit?: string): void {
  const text = target === undefined ? undefined : target.atLeast !== undefined ? `>= ${target.atLeast}` : `<= ${target.atMost}`
  const isMet = target === undefined ? undefined : target.atLeast !== undefined ? ratio >= target.atLeast : ratio <= target.atMost!
  ratios.push({ label, ratio, target: text, isMet, ...(unit === undefined ? {} : { unit }) })
}

// ---------------------------------------------------------------------------------------------
// The run
// ---------------------------------------------------------------------------------------------

async function main(): Promise<void> {
  const startedAt = performance.now()
  const load = loadavg().map(value => value.toFixed(2)).join(' ')
  console.log(`rxmcp bench: echo over stdio; ${WARMUP_MS / 1000} s warmup + ${SECONDS} s measured per run, median of ${ROUNDS} alternating rounds`)
  console.log(`node ${process.version}, ${cpus().length} cores, CLK_TCK ${CLOCK_TICKS}, load average ${load}, runs: ${[...selected].join(' ')}\n`)
  Object.assign(report, { date: new Date().toISOString(), node: process.version, cores: cpus().length, loadavg: loadavg(), seconds: SECONDS, warmupSeconds: WARMUP_MS / 1000, rounds: ROUNDS })

  for (const inFlight of [1, 64]) {
    const key = `server-${inFlight}`
    if (!isSelected(key)) continue
    const sides = BEFORE === undefined ? ['rxmcp', 'official', 'fastmcp', 'floor'] as const : ['rxmcp', 'before', 'official', 'fastmcp', 'floor'] as const
    const result = await alternate<keyof typeof SERVERS>(sides, name => benchServer(name, inFlight))
    report[key] = result
    addRows(`stdio server, ${inFlight} in flight`, 'server', result)
    const { rxmcp, official, fastmcp, floor } = result.median
    addBeforeRatios(`stdio server, ${inFlight} in flight,`, result.median)
    addRatio(`server calls/s rxmcp/official, ${inFlight} in flight`, rxmcp.callsPerSecond / official.callsPerSecond, { atLeast: inFlight === 64 ? 2.5 : 1.6 })
    addRatio(`server cpu/call rxmcp/official, ${inFlight} in flight`, rxmcp.cpuPerCall / official.cpuPerCall)
    addRatio(`server calls/s rxmcp/fastmcp, ${inFlight} in flight`, rxmcp.callsPerSecond / fastmcp.callsPerSecond)
    // Issue 24: within 5% of the no-library floor.
    addRatio(`server calls/s rxmcp/floor, ${inFlight} in flight`, rxmcp.callsPerSecond / floor.callsPerSecond, { atLeast: 0.95 })
  }
  if (isSelected('telemetry-64')) {
    // What switching telemetry on costs per call: the everything server with a real SDK (spans
    // batched and dropped, metrics recorded, nothing exported) against itself without telemetry.
    const result = await alternate<keyof typeof SERVERS>(['rxmcp', 'rxmcp-telemetry', 'floor'], name => benchServer(name, 64))
    report['telemetry-64'] = result
    addRows('stdio server, telemetry, 64 in flight', 'server', result)
    const { rxmcp: off, 'rxmcp-telemetry': on, floor } = result.median
    addRatio('telemetry on/off server cpu/call, 64 in flight', on.cpuPerCall / off.cpuPerCall)
    addRatio('telemetry on/off time per call (calls/s off/on), 64 in flight', off.callsPerSecond / on.callsPerSecond)
    addRatio('telemetry off calls/s rxmcp/floor, 64 in flight', off.callsPerSecond / floor.callsPerSecond, { atLeast: 0.95 })
    addRatio('telemetry on calls/s rxmcp/floor, 64 in flight', on.callsPerSecond / floor.callsPerSecond)
  }
  for (const inFlight of [1, 64]) {
    const key = `client-${inFlight}`
    if (!isSelected(key)) continue
    const result = await alternate(['rxmcp', 'official'] as const, name => benchClient(name, inFlight))
    report[key] = result
    addRows(`stdio client, ${inFlight} in flight`, 'client', result)
    addRatio(`client cpu/call rxmcp/official, ${inFlight} in flight`, result.median.rxmcp.cpuPerCall / result.median.official.cpuPerCall, { atMost: 0.4 })
    addRatio(`client calls/s rxmcp/official, ${inFlight} in flight`, result.median.rxmcp.callsPerSecond / result.median.official.callsPerSecond)
  }
  for (const inFlight of [1, 64]) {
    const key = `http-client-${inFlight}`
    if (!isSelected(key)) continue
    const result = await alternate(['rxmcp', 'rxmcp-fetch', 'official'] as const, name => benchHttpClient(name, inFlight))
    report[key] = result
    addRows(`http client, ${inFlight} in flight`, 'client', result)
    addRatio(`http client cpu/call rxmcp/official, ${inFlight} in flight`, result.median.rxmcp.cpuPerCall / result.median.official.cpuPerCall)
    addRatio(`http client cpu/call nodeFetch/global fetch, ${inFlight} in flight`, result.median.rxmcp.cpuPerCall / result.median['rxmcp-fetch'].cpuPerCall)
    addRatio(`http client calls/s rxmcp/official, ${inFlight} in flight`, result.median.rxmcp.callsPerSecond / result.median.official.callsPerSecond)
  }
  if (isSelected('stdio-10mib')) {
    const trips: Record<string, BigTrip> = {}
    for (const name of ['rxmcp', 'floor', 'official'] as const) trips[name] = await bigRoundTrips(name)
    report['stdio-10mib'] = trips
    const show = (trip: BigTrip) => trip.ms !== undefined ? `${trip.ms.toFixed(0)} ms (server cpu ${trip.serverCpuMs!.toFixed(0)} ms)` : `FAILED (${trip.failure})`
    console.log(`stdio, one 10 MiB echo round trip (median of ${BIG_TRIPS}): rxmcp ${show(trips.rxmcp!)}, no-library floor ${show(trips.floor!)}, official SDK ${show(trips.official!)}\n`)
    if (trips.rxmcp!.ms !== undefined && trips.floor!.ms !== undefined) addRatio('stdio 10 MiB round trip time rxmcp/floor', trips.rxmcp!.ms / trips.floor!.ms, { atMost: 1.2 })
    if (trips.rxmcp!.ms !== undefined && trips.official!.ms !== undefined) addRatio('stdio 10 MiB round trip time rxmcp/official', trips.rxmcp!.ms / trips.official!.ms)
  }
  if (isSelected('stdio-10mib-text')) {
    // The same with real text (escapes, non-ASCII): what a file costs, where 'x'.repeat costs least.
    const trips: Record<string, BigTrip> = {}
    for (const name of ['rxmcp', 'floor'] as const) trips[name] = await bigRoundTrips(name, 'text')
    report['stdio-10mib-text'] = trips
    const show = (trip: BigTrip) => trip.ms !== undefined ? `${trip.ms.toFixed(0)} ms (server cpu ${trip.serverCpuMs!.toFixed(0)} ms)` : `FAILED (${trip.failure})`
    console.log(`stdio, one 10 MiB echo round trip of text with escapes and non-ASCII (median of ${BIG_TRIPS}): rxmcp ${show(trips.rxmcp!)}, no-library floor ${show(trips.floor!)}\n`)
    if (trips.rxmcp!.ms !== undefined && trips.floor!.ms !== undefined) addRatio('stdio 10 MiB text round trip time rxmcp/floor', trips.rxmcp!.ms / trips.floor!.ms, { atMost: 1.2 })
  }
  for (const [inFlight, sessions] of [[1, 1], [64, 1], [64, 16]] as const) {
    const key = `http-${inFlight}-${sessions}`
    if (!isSelected(key)) continue
    const sides = BEFORE === undefined ? ['rxmcp', 'official', 'fastmcp', 'floor'] as const : ['rxmcp', 'before', 'official', 'fastmcp', 'floor'] as const
    const result = await alternate<Side | 'before'>(sides, name => benchHttp(name, inFlight, sessions))
    report[key] = result
    addRows(`http, ${inFlight} in flight, ${sessions} session${sessions > 1 ? 's' : ''}`, 'server', result)
    addBeforeRatios(`http, ${inFlight} in flight, ${sessions} sessions,`, result.median)
    // Issue 24: the distance to a server with no MCP library (JSON answers, no SSE).
    addRatio(`http calls/s rxmcp/fastmcp, ${inFlight} in flight, ${sessions} sessions`, result.median.rxmcp.callsPerSecond / result.median.fastmcp.callsPerSecond)
    addRatio(`http calls/s rxmcp/floor, ${inFlight} in flight, ${sessions} sessions`, result.median.rxmcp.callsPerSecond / result.median.floor.callsPerSecond,
      inFlight === 64 && sessions === 16 ? { atLeast: 0.8 } : undefined)
    addRatio(`http calls/s rxmcp/official, ${inFlight} in flight, ${sessions} sessions`, result.median.rxmcp.callsPerSecond / result.median.official.callsPerSecond,
      inFlight === 64 && sessions === 16 ? { atLeast: 4 } : undefined)
  }
  if (isSelected('web-http-64-16')) {
    const result = await alternate(['rxmcp', 'web'] as const, name => benchHttp(name, 64, 16))
    report['web-http-64-16'] = result
    addRows('http through the web handler, 64 in flight, 16 sessions', 'server', result)
    addRatio('http calls/s web handler/node listener, 64 in flight, 16 sessions', result.median.web.callsPerSecond / result.median.rxmcp.callsPerSecond)
    addRatio('http cpu/call web handler/node listener, 64 in flight, 16 sessions', result.median.web.cpuPerCall / result.median.rxmcp.cpuPerCall)
  }
  if (isSelected('web-modern-64')) {
    const result = await alternate(['rxmcp', 'web'] as const, side => benchWebModern(side, 64))
    report['web-modern-64'] = result
    addRows('modern http through the web handler, 64 in flight', 'server', result)
    addRatio('modern http calls/s web handler/node listener, 64 in flight', result.median.web.callsPerSecond / result.median.rxmcp.callsPerSecond)
    addRatio('modern http cpu/call web handler/node listener, 64 in flight', result.median.web.cpuPerCall / result.median.rxmcp.cpuPerCall)
  }
  if (isSelected('http-memory')) {
    // As issue 24 measures it (idleSessionRss): the everything example in a child, 10 sessions
    // opened first and not counted, 1,000 initialized sessions kept open, RSS after a one-second
    // settle before and after; the floor and the official SDK's server the same way. Beside it the
    // minimal rxmcp server over 4,000 sessions (issue 8's measure), and the gc'd heap per session
    // in-process, the steadier figure, listed by what holds it.
    const rx = await idleSessionRss('rxmcp', IDLE_SESSIONS)
    const floor = await idleSessionRss('floor', IDLE_SESSIONS)
    const official = await idleSessionRss('official', IDLE_SESSIONS)
    const minimal = await idleSessionRss('minimal', IDLE_SESSIONS_MINIMAL)
    if (BEFORE !== undefined) {
      const before = await idleSessionRss('rxmcp', IDLE_SESSIONS, BEFORE.dir)
      report['http-memory-before'] = before
      console.log(`http memory per idle initialized session, before (${BEFORE.commit.slice(0, 7)}): ${(before / 1024).toFixed(1)} KiB`)
      addRatio(`http bytes per idle session after/before (${BEFORE.commit.slice(0, 7)})`, rx / before)
    }
    const heap = await idleSessionHeap(2000, 500)
    report['http-memory'] = { rxmcp: rx, floor, official, minimal, rxmcpHeap: heap.full, listenerHeap: heap.listenerOnly, heapByHolder: heap.holders }
    const kb = (bytes: number) => (bytes / 1000).toFixed(1)
    console.log(`http memory per idle initialized session (RSS growth over ${IDLE_SESSIONS}, everything example): rxmcp ${kb(rx)} KB = ${(rx / 1024).toFixed(1)} KiB (target <= 12 KB: ${rx <= 12_000 ? 'met' : 'missed'}), floor ${kb(floor)} KB, official ${kb(official)} KB`)
    console.log(`  minimal rxmcp server (one tool), RSS growth over ${IDLE_SESSIONS_MINIMAL}: ${kb(minimal)} KB`)
    console.log(`  rxmcp heap per idle session after GC: ${(heap.full / 1024).toFixed(1)} KiB (listener alone ${(heap.listenerOnly / 1024).toFixed(1)} KiB)`)
    printHolders('  rxmcp heap per idle session (everything server, 500 sessions)', heap.holders!)
    addRatio('http memory per idle session rxmcp (RSS growth, 1,000 sessions, everything example)', rx / 1000, { atMost: 12 }, ' KB')
    addRatio('http bytes per idle session rxmcp/floor', rx / floor)
    addRatio('http bytes per idle session rxmcp/official', rx / official, { atMost: 0.25 })
  }
  for (const inFlight of [1, 64]) {
    const key = `ws-${inFlight}`
    if (!isSelected(key)) continue
    const sides = BEFORE === undefined ? ['floor', 'rxmcp-json', 'rxmcp-msgpack'] as const : ['floor', 'rxmcp-json', 'before-json', 'rxmcp-msgpack'] as const
    const result = await alternate<WsTarget>(sides, name => benchWs(name, inFlight))
    report[key] = result
    addRows(`websocket, ${inFlight} in flight`, 'server', result)
    addBeforeRatios(`ws json, ${inFlight} in flight,`, result.median, 'rxmcp-json', 'before-json')
    addRatio(`ws json calls/s rxmcp/floor, ${inFlight} in flight`, result.median['rxmcp-json'].callsPerSecond / result.median.floor.callsPerSecond, inFlight === 64 ? { atLeast: 0.7 } : undefined)
    addRatio(`ws calls/s msgpack/json, ${inFlight} in flight`, result.median['rxmcp-msgpack'].callsPerSecond / result.median['rxmcp-json'].callsPerSecond, { atLeast: 1 })
  }
  if (isSelected('ws-big')) {
    const server = await startWs(['--import', 'tsx', 'spec/bench/rxmcp-ws-server.ts'])
    try {
      const timings: Record<string, number> = {}
      for (const encoding of ['json', 'msgpack', 'json', 'msgpack'] as const) {
        const driver = await wsDriver(server.url, encoding)
        await driver.request('tools/call', { name: 'big', arguments: {} })
        const started = performance.now()
        for (let i = 0; i < 20; i++) await driver.request('tools/call', { name: 'big', arguments: {} })
        timings[encoding] = Math.min(timings[encoding] ?? Infinity, (performance.now() - started) / 20)
        driver.close()
      }
      report['ws-big'] = timings
      console.log(`websocket, 1 MiB structured result: json ${timings.json!.toFixed(1)} ms/call, msgpack ${timings.msgpack!.toFixed(1)} ms/call`)
      addRatio('ws 1 MiB result time msgpack/json', timings.msgpack! / timings.json!, { atMost: 1 })
    } finally {
      server.child.kill('SIGKILL')
    }
  }

  for (const transport of ['http', 'stdio'] as const) {
    const key = `modern-${transport}-64`
    if (!isSelected(key)) continue
    const sides = [...(BEFORE === undefined ? ['rxmcp', 'sdk-v2'] as const : ['rxmcp', 'before', 'sdk-v2'] as const), ...(transport === 'http' ? ['floor'] as const : [])]
    const result = await alternate<ModernSide | 'before' | 'floor'>(sides, side => side === 'floor' ? benchModernHttpOf(startHttpServer('floor'), 64)
      : transport === 'http' ? benchModernHttp(side, 64) : benchModernStdio(side, 64))
    report[key] = result
    addRows(`modern ${transport}, 64 in flight`, 'server', result)
    const { rxmcp, 'sdk-v2': sdkV2 } = result.median
    addBeforeRatios(`modern ${transport}, 64 in flight,`, result.median)
    addRatio(`modern ${transport} calls/s rxmcp/sdk-v2, 64 in flight`, rxmcp.callsPerSecond / sdkV2.callsPerSecond, transport === 'http' ? { atLeast: 7 } : undefined)
    addRatio(`modern ${transport} cpu/call rxmcp/sdk-v2, 64 in flight`, rxmcp.cpuPerCall / sdkV2.cpuPerCall)
    if (result.median.floor !== undefined) addRatio(`modern ${transport} calls/s rxmcp/floor, 64 in flight`, rxmcp.callsPerSecond / result.median.floor.callsPerSecond, { atLeast: 0.8 })
  }
  if (isSelected('tasks')) {
    console.log('tasks: a tool call as a task (create, poll to completion, result) against the same call made plainly, one process')
    const tasks = await runTasksBench(SECONDS)
    report.tasks = tasks
    for (const row of tasks.rows.filter(row => row.inFlight === 64)) {
      addRatio(`tasks ${row.transport} ${row.era} task/plain time per call, 64 in flight`, row.plainPerSecond / row.taskPerSecond)
    }
  }
  if (isSelected('auth')) {
    console.log('auth: tools/call over Streamable HTTP with bearer JWT checking (cached, and verified every time) against auth off, one process')
    const auth = await runAuthBench(SECONDS)
    report.auth = auth
    for (const row of auth.filter(row => row.mode !== 'off')) {
      const off = auth.find(other => other.mode === 'off' && other.inFlight === row.inFlight)!
      addRatio(`auth ${row.mode} time/off time per call, ${row.inFlight} in flight`, off.perSecond / row.perSecond, row.mode === 'jwt' ? { atMost: 1.1 } : undefined)
    }
  }
  if (isSelected('host')) {
    console.log('host: tools/call through the gateway (client -> gateway -> host -> server, Streamable HTTP both hops) against direct, one process')
    const host = await runHostBench(SECONDS)
    report.host = host
    for (const row of host.rows) addRatio(`host gateway/direct calls/s, ${row.inFlight} in flight`, row.ratio, row.inFlight === 64 ? { atLeast: 0.5 } : undefined)
  }
  if (isSelected('gateway')) {
    console.log('gateway: echo at 64 in flight through `rxmcp gateway` (legacy and modern front; stdio and HTTP behind) against direct; CPU per call of each process')
    const gateway = await runGatewayBench(SECONDS, WARMUP_MS / 1000, ROUNDS)
    report.gateway = gateway
    for (const row of gateway.ratios) addRatio(row.label, row.ratio, row.target)
  }
  if (isSelected('redis')) {
    console.log('redis: tools/call over Streamable HTTP, one instance with in-memory stores against one on Redis (events, tasks, bus), one process; then 3 instance processes on that Redis behind nginx, one session; the Redis mode on a 3-primary Redis Cluster; the 3 processes through a rolling restart')
    const redis = await runRedisBench(SECONDS)
    report.redis = redis
    report['redis-cluster'] = redis.cluster
    report['redis-on-redis-cluster'] = redis.onCluster
    report['redis-rolling-restart'] = redis.rollingRestart
    addRatio('redis/memory time per call, 64 in flight', redis.memoryPerSecond / redis.redisPerSecond, { atMost: 1.5 })
    addRatio('redis 3 instances behind nginx/1 instance calls/s, 64 in flight', redis.cluster.perSecond / redis.redisPerSecond)
  }
  if (isSelected('validator')) {
    console.log('validator: one JSON Schema validation (and one compile), compiled (ajv) against interpreted (@cfworker/json-schema), CPU ns, one process')
    const rows = await runValidatorBench()
    report.validator = rows
    for (const line of formatValidatorRows(rows)) console.log(line)
    for (const row of rows) addRatio(`validator ${row.name} interpreted/compiled ns`, row.interpretedNs / row.compiledNs)
  }
  if (isSelected('cold')) {
    execFileSync('npm', ['run', 'build'], { cwd: root, stdio: 'ignore' })
    const cold = await runColdStart()
    report.cold = cold
    console.log('cold start: spawn -> initialize answered (median), RSS after it')
    for (const row of cold) console.log(`  ${row.name.padEnd(16)} ${row.medianMs.toFixed(1).padStart(7)} ms  ${row.rssMiB.toFixed(1).padStart(6)} MiB  ${row.ratioToFloor.toFixed(2)}x the no-library server  (CPU ${row.cpuMs.toFixed(1)} ms, ${row.cpuRatioToFloor.toFixed(2)}x)${row.target === undefined ? '' : `  target ${row.target}`}`)
    const rxmcp = cold.find(row => row.name === 'rxmcp')!
    addRatio('cold start rxmcp/no-library', rxmcp.ratioToFloor, { atMost: COLD_START_TARGET })
    addRatio('cold start rxmcp subpaths/no-library', cold.find(row => row.name === 'rxmcp-subpaths')!.ratioToFloor, { atMost: COLD_START_TARGET })
    addRatio('cold start rxmcp/official', rxmcp.medianMs / cold.find(row => row.name === 'official')!.medianMs, { atMost: 1 })
  }
  if (isSelected('footprint')) {
    const footprint = runFootprint()
    report.footprint = footprint
    console.log('install footprint: what `npm install <package>` adds to an empty project')
    for (const row of footprint) console.log(`  ${row.name.padEnd(10)} ${String(row.packages).padStart(3)} packages besides it  ${row.megabytes.toFixed(2).padStart(6)} MB`)
  }

  console.log(`\nmedians (cpu: server runs = server process from /proc; client runs = this process; "other side" = driver or server;\n spread = (max - min) / median of a side's calls/s over its rounds: the noise a ratio of two sides moves by)`)
  printTable(table)
  console.log('\nratios')
  const width = Math.max(...ratios.map(ratio => ratio.label.length))
  for (const { label, ratio, target, isMet, unit = 'x' } of ratios) {
    console.log(`  ${label.padEnd(width)}  ${ratio.toFixed(2).padStart(6)}${unit}${target === undefined ? '' : `   target ${target.padEnd(7)} ${isMet ? 'met' : 'MISSED'}`}`)
  }
  const totalSeconds = (performance.now() - startedAt) / 1000
  Object.assign(report, { ratios, totalSeconds })
  mkdirSync(`${root}/.bench`, { recursive: true })
  writeFileSync(`${root}/.bench/results.json`, JSON.stringify(report, null, 2))
  // The chart of every server path measured here, each side against that path's floor.
  const groups = new Map<string, { side: string; callsPerSecond: number }[]>()
  for (const [run, side, callsPerSecond] of table) {
    // The BENCH_BEFORE tree is a pair for reading a change, not a peer: not in the chart.
    if (side!.startsWith('before')) continue
    if (!groups.has(run!)) groups.set(run!, [])
    groups.get(run!)!.push({ side: side!, callsPerSecond: Number(callsPerSecond) })
  }
  const svg = renderChart([...groups].map(([path, bars]) => ({ path, bars })), `rxmcp bench, calls/s against the no-library floor (${new Date().toISOString().slice(0, 10)}, ${cpus().length} cores)`)
  writeFileSync(`${root}/.bench/chart.svg`, svg)
  if (process.env.BENCH_CHART !== undefined) writeFileSync(process.env.BENCH_CHART, svg)
  console.log(`\n${totalSeconds.toFixed(0)} s in all; results in .bench/results.json, chart in .bench/chart.svg${process.env.BENCH_CHART === undefined ? '' : ` and ${process.env.BENCH_CHART}`}`)
}

try {
  await main()
} catch (error) {
  console.error('bench failed:', error)
  process.exitCode = 1
} finally {
  killChildren()
}
