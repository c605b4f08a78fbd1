/**
 * `npm run bench`: the echo tool over stdio, rxmcp against the official SDK, in one run.
 *
 * - Servers: one lean raw driver (JSON lines written and parsed by hand, the same for both) keeps
 *   N requests in flight against the rxmcp everything server and against an official McpServer;
 *   server CPU comes from /proc/<pid>/stat.
 * - Clients: rxmcp's client and the official Client call the same rxmcp server; client CPU is this
 *   process's cpuUsage over the measured window.
 * Runs alternate (A, B, A, B) and the median of the rounds is reported, so noise hits both sides.
 * BENCH_ONLY (e.g. `server-1,client-64`) picks runs. BENCH_SECONDS (default 3) sets the measured window of each run, BENCH_ROUNDS (default 2) the rounds.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { readFileSync, mkdirSync, writeFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { connect } from '../../actors/client.ts'
import { openSession, post, rss, startHttpServer } from './http-bench.ts'
import { WebSocket } from 'ws'
import { decodeMsgpackFrame, encodeMsgpack } from '../../lib/codec/msgpack.ts'
import { stdioClient } from '../../transports/stdio.ts'

const root = fileURLToPath(new URL('../..', import.meta.url))
const SECONDS = Number(process.env.BENCH_SECONDS ?? 3)
const WARMUP_MS = 1000
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2)
const CLOCK_TICKS = 100
const servers = {
  rxmcp: ['--import', 'tsx', 'examples/everything/server.ts'],
  official: ['--import', 'tsx', 'spec/bench/official-echo-server.ts'],
} as const

interface Measure { callsPerSecond: number; p50: number; p99: number; cpuPerCall: number }

function percentile(sorted: number[], p: number): number {
  return sorted.length === 0 ? 0 : sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]!
}

function childCpuMs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ')
  return (Number(fields[11]) + Number(fields[12])) * 1000 / CLOCK_TICKS
}

/** Keeps `inFlight` calls going through `call` for warmup + SECONDS; measures the window after warmup. */
async function drive(inFlight: number, call: () => Promise<unknown>, cpu: () => number): Promise<Measure> {
  const latencies: number[] = []
  let isMeasuring = false
  let isRunning = true
  let calls = 0
  const worker = async () => {
    while (isRunning) {
      const started = performance.now()
      await call()
      if (isMeasuring) { latencies.push(performance.now() - started); calls++ }
    }
  }
  const workers = Array.from({ length: inFlight }, worker)
  await new Promise(resolve => setTimeout(resolve, WARMUP_MS))
  const cpuBefore = cpu()
  const started = performance.now()
  isMeasuring = true
  await new Promise(resolve => setTimeout(resolve, SECONDS * 1000))
  isMeasuring = false
  const elapsed = performance.now() - started
  const cpuUsed = cpu() - cpuBefore
  isRunning = false
  await Promise.all(workers)
  latencies.sort((a, b) => a - b)
  return { callsPerSecond: calls / elapsed * 1000, p50: percentile(latencies, 0.5), p99: percentile(latencies, 0.99), cpuPerCall: cpuUsed / calls * 1000 }
}

/** A minimal JSON-lines MCP client, identical for both servers. */
class RawDriver {
  readonly child: ChildProcess
  readonly #waiting = new Map<number, () => void>()
  #nextId = 1
  #buffer = ''

  constructor(args: readonly string[]) {
    this.child = spawn(process.execPath, args, { cwd: root, stdio: ['pipe', 'pipe', 'inherit'] })
    this.child.stdout!.setEncoding('utf8')
    this.child.stdout!.on('data', (text: string) => {
      this.#buffer += text
      let newline: number
      while ((newline = this.#buffer.indexOf('\n')) >= 0) {
        const line = this.#buffer.slice(0, newline)
        this.#buffer = this.#buffer.slice(newline + 1)
        const message = JSON.parse(line)
        if (message.id !== undefined) { this.#waiting.get(message.id)?.(); this.#waiting.delete(message.id) }
      }
    })
  }

  request(method: string, params: object): Promise<void> {
    const id = this.#nextId++
    return new Promise(resolve => {
      this.#waiting.set(id, resolve)
      this.child.stdin!.write(JSON.stringify({ jsonrpc: '2.0', id, method, params }) + '\n')
    })
  }

  async start(): Promise<void> {
    await this.request('initialize', { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'bench', version: '1' } })
    this.child.stdin!.write('{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
  }

  async stop(): Promise<void> {
    this.child.stdin!.end()
    await new Promise(resolve => this.child.once('exit', resolve))
  }
}

async function benchServer(name: keyof typeof servers, inFlight: number): Promise<Measure> {
  const driver = new RawDriver(servers[name])
  try {
    await driver.start()
    const params = { name: 'echo', arguments: { text: 'hello' } }
    return await drive(inFlight, () => driver.request('tools/call', params), () => childCpuMs(driver.child.pid!))
  } finally {
    await driver.stop()
  }
}

const selfCpuMs = () => { const usage = process.cpuUsage(); return (usage.user + usage.system) / 1000 }

async function benchClient(name: 'rxmcp' | 'official', inFlight: number): Promise<Measure> {
  if (name === 'rxmcp') {
    const client = await connect(stdioClient({ command: process.execPath, args: servers.rxmcp, cwd: root, stderr: 'inherit' }), { name: 'bench', version: '1' })
    try {
      return await drive(inFlight, () => client.callTool('echo', { text: 'hello' }), selfCpuMs)
    } finally { await client.close() }
  }
  const client = new Client({ name: 'bench', version: '1' })
  await client.connect(new StdioClientTransport({ command: process.execPath, args: [...servers.rxmcp], cwd: root, stderr: 'inherit' }))
  try {
    return await drive(inFlight, () => client.callTool({ name: 'echo', arguments: { text: 'hello' } }), selfCpuMs)
  } finally { await client.close() }
}

function median(measures: Measure[]): Measure {
  const pick = (key: keyof Measure) => { const sorted = measures.map(m => m[key]).sort((a, b) => a - b); return sorted[Math.floor((sorted.length - 1) / 2)]! }
  return { callsPerSecond: pick('callsPerSecond'), p50: pick('p50'), p99: pick('p99'), cpuPerCall: pick('cpuPerCall') }
}

async function alternate<K extends string>(names: readonly K[], inFlight: number, run: (name: K, inFlight: number) => Promise<Measure>): Promise<Record<K, Measure>> {
  const results = Object.fromEntries(names.map(name => [name, [] as Measure[]])) as unknown as Record<K, Measure[]>
  for (let round = 0; round < ROUNDS; round++) {
    for (const name of round % 2 === 0 ? names : [...names].reverse()) results[name].push(await run(name, inFlight))
  }
  return Object.fromEntries(names.map(name => [name, median(results[name])])) as Record<K, Measure>
}

const format = (m: Measure) => `${m.callsPerSecond.toFixed(0).padStart(8)} calls/s  p50 ${m.p50.toFixed(3).padStart(7)} ms  p99 ${m.p99.toFixed(3).padStart(7)} ms  cpu ${m.cpuPerCall.toFixed(1).padStart(6)} µs/call`

/** BENCH_ONLY=server-1,client-64 runs just those runs. */
const only = (key: string) => process.env.BENCH_ONLY === undefined || process.env.BENCH_ONLY.split(',').includes(key)
const report: Record<string, unknown> = { seconds: SECONDS, rounds: ROUNDS, node: process.version }
console.log(`rxmcp bench: echo over stdio, ${SECONDS} s per run after ${WARMUP_MS} ms warmup, median of ${ROUNDS} alternating rounds\n`)
const ratios: [string, number, string][] = []
for (const inFlight of [1, 64]) {
  if (!only(`server-${inFlight}`)) continue
  const result = await alternate(['rxmcp', 'official'] as const, inFlight, benchServer)
  report[`server-${inFlight}`] = result
  console.log(`server, ${inFlight} in flight (same raw driver; cpu = server process)`)
  console.log(`  rxmcp     ${format(result.rxmcp)}`)
  console.log(`  official  ${format(result.official)}`)
  ratios.push([`server calls/s rxmcp/official at ${inFlight} in flight`, result.rxmcp.callsPerSecond / result.official.callsPerSecond, inFlight === 64 ? '>= 2.5' : '>= 1.6'])
}
for (const inFlight of [1, 64]) {
  if (!only(`client-${inFlight}`)) continue
  const result = await alternate(['rxmcp', 'official'] as const, inFlight, benchClient)
  report[`client-${inFlight}`] = result
  console.log(`client, ${inFlight} in flight (same rxmcp server; cpu = client process)`)
  console.log(`  rxmcp     ${format(result.rxmcp)}`)
  console.log(`  official  ${format(result.official)}`)
  ratios.push([`client cpu/call rxmcp/official at ${inFlight} in flight`, result.rxmcp.cpuPerCall / result.official.cpuPerCall, '<= 0.6'])
}
async function benchHttp(name: 'rxmcp' | 'official', inFlight: number, sessions = 1): Promise<Measure> {
  const { child, url } = await startHttpServer(name)
  try {
    const ids = await Promise.all(Array.from({ length: sessions }, () => openSession(url)))
    let next = 0
    let id = 1
    const call = async () => {
      const session = ids[next++ % ids.length]!
      const answer = await post(url, `{"jsonrpc":"2.0","id":${id++},"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello"}}}`, session)
      if (!answer.text.includes('"hello"')) throw new Error(`bad answer ${answer.status}: ${answer.text.slice(0, 200)}`)
    }
    return await drive(inFlight, call, () => childCpuMs(child.pid!))
  } finally {
    child.kill()
  }
}

async function idleSessionBytes(name: 'rxmcp' | 'official', count = 1000): Promise<number> {
  const { child, url } = await startHttpServer(name)
  try {
    await openSession(url)
    await new Promise(resolve => setTimeout(resolve, 500))
    const before = rss(child.pid!)
    for (let batch = 0; batch < count / 50; batch++) await Promise.all(Array.from({ length: 50 }, () => openSession(url)))
    await new Promise(resolve => setTimeout(resolve, 1000))
    return (rss(child.pid!) - before) / count
  } finally {
    child.kill()
  }
}

for (const [inFlight, sessions] of [[1, 1], [64, 1], [64, 16]] as const) {
  const key = `http-${inFlight}-${sessions}`
  if (!only(key)) continue
  const result = await alternate(['rxmcp', 'official'] as const, inFlight, (name, n) => benchHttp(name, n, sessions))
  report[key] = result
  console.log(`streamable http, ${inFlight} in flight, ${sessions} session(s) (same raw driver; cpu = server process)`)
  console.log(`  rxmcp     ${format(result.rxmcp)}`)
  console.log(`  official  ${format(result.official)}`)
  ratios.push([`http calls/s rxmcp/official, ${inFlight} in flight, ${sessions} sessions`, result.rxmcp.callsPerSecond / result.official.callsPerSecond, inFlight === 64 && sessions === 16 ? '>= 4' : '-'])
}
if (only('http-memory')) {
  const rx = await idleSessionBytes('rxmcp')
  const official = await idleSessionBytes('official')
  report['http-memory'] = { rxmcp: rx, official }
  console.log(`memory per idle initialized session (RSS growth over 1,000 sessions): rxmcp ${(rx / 1024).toFixed(1)} KiB, official ${(official / 1024).toFixed(1)} KiB`)
  ratios.push(['http bytes per idle session rxmcp/official', rx / official, '<= 0.25'])
}

/** Starts a WebSocket server child; resolves with its URL. */
async function startWs(args: string[]): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, args, { cwd: root, stdio: ['ignore', 'pipe', 'inherit'] })
  const url = await new Promise<string>((resolve, reject) => {
    let seen = ''
    child.stdout!.on('data', chunk => { seen += chunk; const match = /(ws:\/\/\S+)/.exec(seen); if (match) resolve(match[1]!) })
    child.on('exit', code => reject(new Error(`exited ${code}: ${seen}`)))
  })
  return { child, url }
}

/** A raw WebSocket driver: JSON text or msgpack binary, requests matched by id. */
async function wsDriver(url: string, encoding: 'json' | 'msgpack') {
  const socket = new WebSocket(url, [encoding === 'msgpack' ? 'mcp.msgpack' : 'mcp'], { perMessageDeflate: false, maxPayload: 64 << 20 })
  await new Promise((resolve, reject) => { socket.once('open', resolve); socket.once('error', reject) })
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

type WsTarget = 'floor' | 'rxmcp-json' | 'rxmcp-msgpack'
async function benchWs(target: WsTarget, inFlight: number): Promise<Measure> {
  const server = await startWs(target === 'floor' ? ['--import', 'tsx', 'spec/bench/ws-floor-server.ts'] : ['--import', 'tsx', 'spec/bench/rxmcp-ws-server.ts'])
  try {
    const driver = await wsDriver(server.url, target === 'rxmcp-msgpack' ? 'msgpack' : 'json')
    const params = { name: 'echo', arguments: { text: 'hello' } }
    const result = await drive(inFlight, () => driver.request('tools/call', params), () => childCpuMs(server.child.pid!))
    driver.close()
    return result
  } finally {
    server.child.kill()
  }
}

for (const inFlight of [1, 64]) {
  const key = `ws-${inFlight}`
  if (!only(key)) continue
  const result = await alternate(['floor', 'rxmcp-json', 'rxmcp-msgpack'] as const, inFlight, benchWs)
  report[key] = result
  console.log(`websocket, ${inFlight} in flight (raw ws driver; cpu = server process)`)
  console.log(`  floor          ${format(result.floor)}`)
  console.log(`  rxmcp json     ${format(result['rxmcp-json'])}`)
  console.log(`  rxmcp msgpack  ${format(result['rxmcp-msgpack'])}`)
  ratios.push([`ws json calls/s rxmcp/floor at ${inFlight} in flight`, result['rxmcp-json'].callsPerSecond / result.floor.callsPerSecond, inFlight === 64 ? '>= 0.7' : '-'])
  ratios.push([`ws calls/s msgpack/json at ${inFlight} in flight`, result['rxmcp-msgpack'].callsPerSecond / result['rxmcp-json'].callsPerSecond, '>= 1'])
}
if (only('ws-big')) {
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
    ratios.push(['ws 1 MiB result time msgpack/json', timings.msgpack! / timings.json!, '< 1'])
  } finally {
    server.child.kill()
  }
}

console.log('\nratios')
for (const [label, ratio, target] of ratios) console.log(`  ${label.padEnd(48)} ${ratio.toFixed(2).padStart(6)}x   target ${target}`)
report.ratios = Object.fromEntries(ratios.map(([label, ratio]) => [label, ratio]))
mkdirSync(`${root}/.bench`, { recursive: true })
writeFileSync(`${root}/.bench/results.json`, JSON.stringify(report, null, 2))
