/**
 * The gateway part of `npm run bench` (`BENCH_ONLY=gateway`), issue 26's measure: the echo tool at
 * 64 in flight, rxmcp's client in this process, every server in a child of its own, as deployed:
 *
 *   direct   client --HTTP--> everything                                   (front comparators, per era)
 *            client --HTTP|stdio--> everything, the host's client options  (back comparators: what the gateway's own client does)
 *   gateway  client --HTTP (legacy | modern)--> rxmcp gateway --stdio | HTTP--> everything
 *   floor    client --HTTP (legacy | modern)--> a proxy with no MCP library (http-floor-proxy.ts) --HTTP--> everything
 *
 * For each gateway row: calls/s, and CPU per call of every process (client = this process, gateway,
 * downstream server), each read around the same measured window (/proc for children, cpuUsage for
 * this process). Ratios, as the issue states its targets:
 *   - gateway CPU per proxied call / (direct server CPU per call in the front's era + our client's CPU
 *     per call over the downstream's transport, in the era the host's client picks)   target <= 1.2
 *   - calls/s gateway / direct (front era)                                           target >= 0.6
 *   - calls/s floor proxy / direct (front era), no target: the most one more HTTP hop leaves of
 *     direct calls/s on this machine when it does nothing of MCP
 * Sides alternate round by round (median of the rounds); all processes start once and stay up, so
 * a side's window sees the others idle. The servers and the gateway run bundled (built.ts), as a
 * user's build runs them.
 *
 * `GATEWAY_NODE_FLAGS` adds node flags to the gateway child only (`--max-semi-space-size=32` gave 0-11%
 * less gateway CPU per call in one run: GC is 10-16% of its profile).
 *
 * `GATEWAY_PROFILE=1` runs the gateway child under `node --cpu-prof` (.bench/profiles/); summarize
 * the newest profile with `npx tsx spec/bench/profile.ts summarize <file>`.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { mkdirSync, readdirSync } from 'node:fs'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { connect, type ClientOptions, type McpClient } from '../../actors/client.ts'
import { streamableHttpClient } from '../../transports/http-client.ts'
import { serverArgs } from './built.ts'
import { startHttpServer } from './http-bench.ts'
import { childPids, processCpuMs, selfCpuMs, within } from './procs.ts'
import { callLoop, type LoopOptions } from './gateway-driver.ts'

const root = fileURLToPath(new URL('../..', import.meta.url))
const INFO = { name: 'rxmcp-gateway-bench', version: '1' }
const EVERYTHING = ['--import', 'tsx', 'examples/everything/server.ts']
const GATEWAY = ['--import', 'tsx', 'bin/rxmcp.ts']
const DRIVER = ['--import', 'tsx', 'spec/bench/gateway-driver.ts']

/** One measured window of one side: calls/s and CPU µs per call of each process that took part. */
export interface GatewayMeasure {
  callsPerSecond: number
  clientCpuPerCall: number
  /** The server the client talks to: the everything server (direct) or the gateway. */
  serverCpuPerCall: number
  /** Gateway rows: the everything server behind the gateway. */
  downstreamCpuPerCall?: number
}

/** A side: a connected client, the tool it calls, and the processes whose CPU counts. */
interface Side { client?: McpClient; driver?: ChildProcess; tool: string; serverPid: number; downstreamPid?: number }

/** The bench's result: every side's median, the eras the auto clients chose, the ratios. */
export interface GatewayBenchResult {
  median: Record<string, GatewayMeasure>
  rounds: Record<string, GatewayMeasure[]>
  eras: Record<string, string>
  ratios: { label: string; ratio: number; target?: { atLeast?: number; atMost?: number } }[]
  loadavg: { before: number[]; after: number[] }
}

const delay = (ms: number) => new Promise(resolve => setTimeout(resolve, ms))

/**
 * One window of `side` (see callLoop): calls/s and the CPU per call of each process, read at the
 * window's edges. A side whose client runs in a driver child (the back comparators) has the loop run
 * there and its CPU read from /proc like the others'.
 */
async function measure(side: Side, inFlight: number, warmupMs: number, windowMs: number, pacePerSecond?: number): Promise<GatewayMeasure> {
  const options: LoopOptions = { inFlight, warmupMs, windowMs, ...(pacePerSecond === undefined ? {} : { pacePerSecond }) }
  const cpu = () => ({
    client: side.driver === undefined ? selfCpuMs() : processCpuMs(side.driver.pid!),
    server: processCpuMs(side.serverPid),
    downstream: side.downstreamPid === undefined ? 0 : processCpuMs(side.downstreamPid),
  })
  let before = cpu()
  let after = before
  const onEdge = (edge: 'start' | 'end') => { if (edge === 'start') before = cpu(); else after = cpu() }
  const { calls, elapsedMs } = side.driver === undefined
    ? await within(callLoop(side.client!, side.tool, options, onEdge), warmupMs + windowMs + 30_000, 'calls still in flight 30 s after the window')
    : await within(runInDriver(side.driver, options, onEdge), warmupMs + windowMs + 30_000, 'the driver did not finish its window')
  const perCall = (ms: number) => ms * 1000 / calls
  return {
    callsPerSecond: calls / elapsedMs * 1000,
    clientCpuPerCall: perCall(after.client - before.client),
    serverCpuPerCall: perCall(after.server - before.server),
    ...(side.downstreamPid === undefined ? {} : { downstreamCpuPerCall: perCall(after.downstream - before.downstream) }),
  }
}

/** Runs one window in a driver child, passing its edges on. */
function runInDriver(driver: ChildProcess, options: LoopOptions, onEdge: (edge: 'start' | 'end') => void): Promise<{ calls: number; elapsedMs: number }> {
  return new Promise((resolve, reject) => {
    const onMessage = (message: { edge?: 'start' | 'end'; done?: { calls: number; elapsedMs: number; error?: string } }) => {
      if (message.edge !== undefined) onEdge(message.edge)
      if (message.done === undefined) return
      driver.off('message', onMessage)
      if (message.done.error !== undefined) reject(new Error(message.done.error))
      else resolve(message.done)
    }
    driver.on('message', onMessage)
    driver.send({ measure: options })
  })
}

/** A driver child (gateway-driver.ts, bundled) connected over `kind` to `target`; resolves once it is. */
async function startDriver(kind: 'http' | 'stdio', target: string): Promise<{ child: ChildProcess; era: string; serverPid?: number }> {
  const child = spawn(process.execPath, [...serverArgs(DRIVER, root), kind, target], { cwd: root, stdio: ['ignore', 'ignore', 'inherit', 'ipc'], env: { ...process.env, RXMCP_BENCH_DRIVER: '1' } })
  const ready = await within(new Promise<{ era: string; serverPid?: number }>((resolve, reject) => {
    child.once('message', message => resolve(message as { era: string; serverPid?: number }))
    child.once('exit', code => reject(new Error(`the bench driver exited ${code}`)))
  }), 30_000, 'the bench driver did not connect')
  return { child, ...ready }
}

/** `rxmcp gateway --config FILE --port 0` as a child (bundled); resolves with its URL once it serves. */
async function startGateway(config: object, scratch: string, name: string, isProfiled = process.env.GATEWAY_PROFILE !== undefined): Promise<{ child: ChildProcess; url: string }> {
  const file = join(scratch, `${name}.json`)
  await writeFile(file, JSON.stringify(config))
  const profile = !isProfiled ? [] : ['--cpu-prof', `--cpu-prof-dir=${root}.bench/profiles`, '--cpu-prof-interval=100', `--cpu-prof-name=gateway-${name}-${Date.now()}.cpuprofile`]
  if (profile.length > 0) mkdirSync(`${root}.bench/profiles`, { recursive: true })
  // Profiled, the gateway runs through tsx so that its functions keep their files' names.
  const args = profile.length > 0 ? [...profile, ...GATEWAY] : serverArgs(GATEWAY, root)
  const child = spawn(process.execPath, [...(process.env.GATEWAY_NODE_FLAGS?.split(' ').filter(Boolean) ?? []), ...args, 'gateway', '--config', file, '--port', '0'], { cwd: root, stdio: ['ignore', 'ignore', 'pipe'] })
  const url = await within(new Promise<string>((resolve, reject) => {
    let seen = ''
    child.stderr!.on('data', (chunk: Buffer) => { seen += chunk; const match = /serving (http:\/\/127\.0\.0\.1:\d+\/mcp)/.exec(seen); if (match) resolve(match[1]!) })
    child.on('exit', code => reject(new Error(`the gateway exited ${code}: ${seen}`)))
  }), 30_000, 'the gateway did not print its URL')
  return { child, url }
}

/** Waits until the gateway lists `tool` (its server comes up after it listens). */
async function untilListed(client: McpClient, tool: string): Promise<void> {
  for (let tries = 0; !(await client.listTools()).tools.some(listed => listed.name === tool); tries++) {
    if (tries > 600) throw new Error(`the gateway never listed ${tool}`)
    await delay(50)
  }
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b)
  const middle = sorted.length >> 1
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2
}

/**
 * Runs every side `rounds` times (order reversed every other round) and prints the table and ratios.
 * Closes every client and child it started.
 */
export async function runGatewayBench(seconds = 3, warmupSeconds = 1, rounds = 3, inFlight = 64): Promise<GatewayBenchResult> {
  const loadBefore = loadavg()
  const scratch = await mkdtemp(join(tmpdir(), 'rxmcp-gateway-bench-'))
  const children: ChildProcess[] = []
  const clients: McpClient[] = []
  const everythingStdio = { command: process.execPath, args: serverArgs(EVERYTHING, root) }
  try {
    // Direct: the everything server over HTTP (front comparator), and over stdio for the back comparator.
    const direct = await startHttpServer('rxmcp')
    children.push(direct.child)
    // Behind the gateways: one HTTP everything of their own, and a stdio one each gateway spawns.
    const behind = await startHttpServer('rxmcp')
    children.push(behind.child)
    const viaStdio = await startGateway({ mcpServers: { echo: everythingStdio } }, scratch, 'stdio')
    children.push(viaStdio.child)
    const viaHttp = await startGateway({ mcpServers: { echo: { url: behind.url.href } } }, scratch, 'http')
    children.push(viaHttp.child)
    // The reference: a proxy with no MCP library in front of the same server (http-floor-proxy.ts).
    const floorProxy = await startHttpServer('floor-proxy', root, [behind.url.href])
    children.push(floorProxy.child)

    const client = async (transport: Parameters<typeof connect>[0], options: ClientOptions = {}) => {
      const made = await within(connect(transport, INFO, options), 30_000, 'a bench client could not connect')
      clients.push(made)
      return made
    }
    const sides: Record<string, Side> = {}
    const eras: Record<string, string> = {}
    for (const era of ['legacy', 'modern'] as const) {
      sides[`direct http ${era}`] = { client: await client(streamableHttpClient(direct.url), { era }), tool: 'echo', serverPid: direct.child.pid! }
    }
    // The back comparators: a client made as the host makes its clients (httpClient / stdioClient,
    // default era), in a bundled child of its own as the gateway's client runs (see gateway-driver.ts).
    const backHttp = await startDriver('http', direct.url.href)
    children.push(backHttp.child)
    sides['direct http host-client'] = { driver: backHttp.child, tool: 'echo', serverPid: direct.child.pid! }
    const backStdio = await startDriver('stdio', JSON.stringify({ ...everythingStdio, cwd: root }))
    children.push(backStdio.child)
    sides['direct stdio host-client'] = { driver: backStdio.child, tool: 'echo', serverPid: backStdio.serverPid! }
    eras['direct http host-client'] = backHttp.era ?? 'unknown'
    eras['direct stdio host-client'] = backStdio.era ?? 'unknown'
    for (const [down, gateway, downstreamPid] of [['stdio', viaStdio, undefined], ['http', viaHttp, behind.child.pid!]] as const) {
      for (const era of ['legacy', 'modern'] as const) {
        const through = await client(streamableHttpClient(gateway.url), { era })
        await untilListed(through, 'echo__echo')
        // The stdio server is the gateway's child (started by its host once the config is read).
        const pid = downstreamPid ?? childPids(gateway.child.pid!)[0]
        if (pid === undefined) throw new Error('the stdio gateway has no child server')
        sides[`gateway ${era} -> ${down}`] = { client: through, tool: 'echo__echo', serverPid: gateway.child.pid!, downstreamPid: pid }
      }
    }

    for (const era of ['legacy', 'modern'] as const) {
      sides[`floor proxy ${era} -> http`] = { client: await client(streamableHttpClient(floorProxy.url), { era }), tool: 'echo', serverPid: floorProxy.child.pid!, downstreamPid: behind.child.pid! }
    }
    const names = Object.keys(sides)
    const all: Record<string, GatewayMeasure[]> = Object.fromEntries(names.map(name => [name, []]))
    for (let round = 0; round < rounds; round++) {
      for (const name of round % 2 === 0 ? names : [...names].reverse()) all[name]!.push(await measure(sides[name]!, inFlight, warmupSeconds * 1000, seconds * 1000))
    }
    // The comparators again, each paced at the rate each gateway side reached (see measure).
    const paced: Record<string, GatewayMeasure[]> = {}
    for (let round = 0; round < rounds; round++) {
      for (const down of ['stdio', 'http'] as const) {
        for (const era of ['legacy', 'modern'] as const) {
          const rate = median(all[`gateway ${era} -> ${down}`]!.map(entry => entry.callsPerSecond))
          for (const comparator of [`direct ${down} host-client`, `direct http ${era}`]) {
            const key = `${comparator} @ gateway ${era} -> ${down}`
            ;(paced[key] ??= []).push(await measure(sides[comparator]!, inFlight, warmupSeconds * 1000, seconds * 1000, rate))
          }
        }
      }
    }
    const pick = (measures: GatewayMeasure[], key: keyof GatewayMeasure) => median(measures.map(entry => entry[key] ?? 0))
    const medians: Record<string, GatewayMeasure> = Object.fromEntries(names.map(name => {
      const measures = all[name]!
      const row: GatewayMeasure = { callsPerSecond: pick(measures, 'callsPerSecond'), clientCpuPerCall: pick(measures, 'clientCpuPerCall'), serverCpuPerCall: pick(measures, 'serverCpuPerCall') }
      if (measures[0]!.downstreamCpuPerCall !== undefined) row.downstreamCpuPerCall = pick(measures, 'downstreamCpuPerCall')
      return [name, row]
    }))

    for (const [key, measures] of Object.entries(paced)) {
      all[key] = measures
      medians[key] = { callsPerSecond: pick(measures, 'callsPerSecond'), clientCpuPerCall: pick(measures, 'clientCpuPerCall'), serverCpuPerCall: pick(measures, 'serverCpuPerCall') }
    }
    const spread = (name: string) => {
      const values = all[name]!.map(entry => entry.callsPerSecond)
      return values.length < 2 ? '-' : `${((Math.max(...values) - Math.min(...values)) / median(values) * 100).toFixed(0)}%`
    }
    console.log(`  ${'side'.padEnd(50)} ${'calls/s'.padStart(8)} ${'client µs'.padStart(10)} ${'server µs'.padStart(10)} ${'downstr µs'.padStart(10)} ${'spread'.padStart(7)}   (CPU per call; server = everything (direct) or the gateway)`)
    for (const name of [...names, ...Object.keys(paced)]) {
      const row = medians[name]!
      console.log(`  ${name.padEnd(50)} ${row.callsPerSecond.toFixed(0).padStart(8)} ${row.clientCpuPerCall.toFixed(1).padStart(10)} ${row.serverCpuPerCall.toFixed(1).padStart(10)} ${(row.downstreamCpuPerCall?.toFixed(1) ?? '-').padStart(10)} ${spread(name).padStart(7)}${eras[name] === undefined ? '' : `   (era ${eras[name]})`}`)
    }

    const ratios: GatewayBenchResult['ratios'] = []
    for (const down of ['stdio', 'http'] as const) {
      const back = medians[`direct ${down} host-client`]!
      for (const era of ['legacy', 'modern'] as const) {
        const gateway = medians[`gateway ${era} -> ${down}`]!
        const front = medians[`direct http ${era}`]!
        ratios.push({
          label: `gateway ${era} -> ${down}: gateway cpu/call / (direct server ${era} + client ${down} ${eras[`direct ${down} host-client`]}) cpu/call`,
          ratio: gateway.serverCpuPerCall / (front.serverCpuPerCall + back.clientCpuPerCall),
          target: { atMost: 1.2 },
        })
        // The same at one rate: both comparators paced at the gateway side's calls/s.
        const at = `@ gateway ${era} -> ${down}`
        ratios.push({
          label: `gateway ${era} -> ${down}: the same, comparators at the gateway's rate`,
          ratio: gateway.serverCpuPerCall / (medians[`direct http ${era} ${at}`]!.serverCpuPerCall + medians[`direct ${down} host-client ${at}`]!.clientCpuPerCall),
          target: { atMost: 1.2 },
        })
        ratios.push({ label: `gateway ${era} -> ${down}: calls/s gateway/direct ${era}`, ratio: gateway.callsPerSecond / front.callsPerSecond, target: { atLeast: 0.6 } })
        if (down === 'http') ratios.push({ label: `floor proxy ${era} -> http (no MCP): calls/s floor proxy/direct ${era}, for reference`, ratio: medians[`floor proxy ${era} -> http`]!.callsPerSecond / front.callsPerSecond })
      }
    }
    for (const { label, ratio, target } of ratios) {
      if (target === undefined) { console.log(`  ${label.padEnd(96)} ${ratio.toFixed(2).padStart(5)}x`); continue }
      const text = target.atLeast !== undefined ? `>= ${target.atLeast}` : `<= ${target.atMost}`
      const isMet = target.atLeast !== undefined ? ratio >= target.atLeast : ratio <= target.atMost!
      console.log(`  ${label.padEnd(96)} ${ratio.toFixed(2).padStart(5)}x  target ${text} ${isMet ? 'met' : 'MISSED'}`)
    }
    const loadAfter = loadavg()
    console.log(`  load average before ${loadBefore.map(value => value.toFixed(2)).join(' ')}, after ${loadAfter.map(value => value.toFixed(2)).join(' ')}`)
    return { median: medians, rounds: all, eras, ratios, loadavg: { before: loadBefore, after: loadAfter } }
  } finally {
    for (const made of clients.reverse()) await within(made.close(), 5_000, 'client close').catch(() => {})
    // SIGTERM: a profiled gateway writes its profile as it exits.
    for (const child of children.reverse()) {
      if (child.exitCode !== null || child.signalCode !== null) continue
      const exited = new Promise(resolve => child.once('exit', resolve))
      child.kill('SIGTERM')
      await within(exited, 10_000, 'child exit').catch(() => child.kill('SIGKILL'))
    }
    await rm(scratch, { recursive: true, force: true })
  }
}

/**
 * Profiles the gateway alone: `rxmcp gateway` under `node --cpu-prof` (through tsx, so functions keep
 * their files), the everything server behind it over `down`, our client calling echo through it in
 * `era` at `inFlight` for `seconds`. Resolves with the profile's path (written as the gateway exits)
 * and the ms from the gateway's start to the measured window (start-up and warmup, to leave out).
 */
export async function profileGateway(down: 'stdio' | 'http', era: 'legacy' | 'modern', seconds = 10, inFlight = 64): Promise<{ file: string; skipMs: number }> {
  const scratch = await mkdtemp(join(tmpdir(), 'rxmcp-gateway-profile-'))
  const children: ChildProcess[] = []
  const startedAt = Date.now()
  // When the gateway was spawned and when the measured window began (performance.now()).
  let spawnedAt = 0
  let windowAt = 0
  try {
    let server: object = { command: process.execPath, args: serverArgs(EVERYTHING, root) }
    if (down === 'http') {
      const behind = await startHttpServer('rxmcp')
      children.push(behind.child)
      server = { url: behind.url.href }
    }
    spawnedAt = performance.now()
    const gateway = await startGateway({ mcpServers: { echo: server } }, scratch, `${era}-${down}`, true)
    children.unshift(gateway.child)
    const client = await connect(streamableHttpClient(gateway.url), INFO, { era })
    await untilListed(client, 'echo__echo')
    const downstreamPid = down === 'http' ? children[1]!.pid! : childPids(gateway.child.pid!)[0]!
    windowAt = performance.now() + 2_000
    const result = await measure({ client, tool: 'echo__echo', serverPid: gateway.child.pid!, downstreamPid }, inFlight, 2_000, seconds * 1000)
    console.log(`gateway ${era} -> ${down} under the profiler: ${result.callsPerSecond.toFixed(0)} calls/s, gateway ${result.serverCpuPerCall.toFixed(0)} µs/call, downstream ${result.downstreamCpuPerCall?.toFixed(0)} µs/call, client ${result.clientCpuPerCall.toFixed(0)} µs/call`)
    await client.close()
  } finally {
    for (const child of children) {
      if (child.exitCode !== null || child.signalCode !== null) continue
      const exited = new Promise(resolve => child.once('exit', resolve))
      child.kill('SIGTERM')
      await within(exited, 20_000, 'child exit').catch(() => child.kill('SIGKILL'))
    }
    await rm(scratch, { recursive: true, force: true })
  }
  const dir = `${root}.bench/profiles`
  const made = readdirSync(dir).filter(name => name.startsWith(`gateway-${era}-${down}-`) && Number(name.split('-').at(-1)!.split('.')[0]) >= startedAt)
  if (made.length === 0) throw new Error('the gateway wrote no profile')
  return { file: join(dir, made.sort().at(-1)!), skipMs: Math.round(windowAt - spawnedAt) }
}
