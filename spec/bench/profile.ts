/**
 * Where rxmcp spends its time on the stdio echo workload: runs one side under `node --cpu-prof`
 * and prints the top functions by self time (and rxmcp's own functions by self and total time).
 *
 *   npx tsx spec/bench/profile.ts server [inFlight=64] [seconds=5]   the everything server, driven by the raw driver
 *   npx tsx spec/bench/profile.ts modern-server [inFlight=64] [seconds=5]   the same in the modern era (server/discover, then calls with _meta)
 *   npx tsx spec/bench/profile.ts client [inFlight=64] [seconds=5]   rxmcp's client calling the everything server
 *   npx tsx spec/bench/profile.ts official-client [inFlight=64] [seconds=5]   the official Client, same server (for comparison)
 *   npx tsx spec/bench/profile.ts gateway [stdio|http] [legacy|modern] [seconds=10]   `rxmcp gateway` proxying echo (gateway-bench.ts), 64 in flight
 *   npx tsx spec/bench/profile.ts summarize <file.cpuprofile> [skipMs=1500]  summarise a profile made elsewhere
 *
 * PROFILE_SERVER=<file> profiles another stdio server than the everything example (the server modes).
 *
 * Profiles are kept in .bench/profiles/ (open them in Chrome DevTools for the flame chart).
 */
import { spawn } from 'node:child_process'
import { mkdirSync, readFileSync, readdirSync, statSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { connect } from '../../actors/client.ts'
import { stdioClient } from '../../transports/stdio.ts'
import { installCleanup, killChildren, within } from './procs.ts'
import { modernEchoParams } from './modern-bench.ts'
import { RawDriver } from './raw-driver.ts'
import { profileGateway } from './gateway-bench.ts'

const root = fileURLToPath(new URL('../..', import.meta.url))
const profileDir = `${root}.bench/profiles`
// PROFILE_SERVER names another stdio server file (spec/bench/rxmcp-telemetry-server.ts: telemetry on).
const SERVER_ARGS = ['--import', 'tsx', process.env.PROFILE_SERVER ?? 'examples/everything/server.ts']
const PROFILE_FLAGS = ['--cpu-prof', `--cpu-prof-dir=${profileDir}`, '--cpu-prof-interval=100']
const ECHO_PARAMS = JSON.stringify({ name: 'echo', arguments: { text: 'hello' } })

interface ProfileNode { id: number; callFrame: { functionName: string; url: string; lineNumber: number; columnNumber: number }; children?: number[] }
interface Profile { nodes: ProfileNode[]; samples: number[]; timeDeltas: number[]; startTime: number; endTime: number }

/** Keeps `inFlight` calls going for `seconds` through a callback-style call. */
function keepBusy(inFlight: number, seconds: number, call: (done: () => void) => void): Promise<number> {
  return new Promise(resolve => {
    let isRunning = true
    let active = 0
    let calls = 0
    const launch = () => {
      active++
      call(() => {
        active--
        calls++
        if (isRunning) launch()
        else if (active === 0) resolve(calls)
      })
    }
    for (let i = 0; i < inFlight; i++) launch()
    setTimeout(() => { isRunning = false }, seconds * 1000)
  })
}

function newestProfile(after: number): string {
  const files = readdirSync(profileDir).filter(name => name.endsWith('.cpuprofile'))
    .map(name => `${profileDir}/${name}`).filter(path => statSync(path).mtimeMs >= after)
    .sort((a, b) => statSync(b).mtimeMs - statSync(a).mtimeMs)
  if (files.length === 0) throw new Error('no profile was written (did the process exit cleanly?)')
  return files[0]!
}

async function profileServer(inFlight: number, seconds: number): Promise<string> {
  const started = Date.now()
  const driver = new RawDriver(process.execPath, [...PROFILE_FLAGS, ...SERVER_ARGS], root)
  try {
    await driver.start()
    const calls = await keepBusy(inFlight, seconds, done => driver.send('tools/call', ECHO_PARAMS, error => { if (error) throw error; done() }))
    console.log(`server profile: ${calls} calls in ${seconds} s at ${inFlight} in flight (${(calls / seconds).toFixed(0)} calls/s under the profiler)`)
  } finally {
    // Ending stdin lets the server exit by itself, which is when the profile is written.
    await driver.stop(10_000)
  }
  return newestProfile(started)
}

/** The same, in the modern era: one `server/discover`, then echo calls carrying the modern `_meta`. */
async function profileModernServer(inFlight: number, seconds: number): Promise<string> {
  const started = Date.now()
  const driver = new RawDriver(process.execPath, [...PROFILE_FLAGS, ...SERVER_ARGS], root)
  const params = modernEchoParams('hello')
  try {
    await within(driver.request('server/discover', { _meta: (JSON.parse(params) as { _meta: object })._meta }), 20_000, 'no answer to server/discover')
    const calls = await keepBusy(inFlight, seconds, done => driver.send('tools/call', params, error => { if (error) throw error; done() }))
    console.log(`modern server profile: ${calls} calls in ${seconds} s at ${inFlight} in flight (${(calls / seconds).toFixed(0)} calls/s under the profiler)`)
  } finally {
    await driver.stop(10_000)
  }
  return newestProfile(started)
}

async function profileClient(which: 'client' | 'official-client', inFlight: number, seconds: number): Promise<string> {
  const started = Date.now()
  const child = spawn(process.execPath, [...PROFILE_FLAGS, '--import', 'tsx', fileURLToPath(import.meta.url), `${which}-load`, String(inFlight), String(seconds)],
    { cwd: root, stdio: 'inherit' })
  const code = await within(new Promise(resolve => child.once('exit', resolve)), (seconds + 60) * 1000, 'client load did not finish')
  if (code !== 0) throw new Error(`client load exited with ${code}`)
  return newestProfile(started)
}

/** The client side's load, run inside the profiled process. */
async function clientLoad(which: 'client' | 'official-client', inFlight: number, seconds: number): Promise<void> {
  const args = { text: 'hello' }
  let call: () => Promise<unknown>
  let close: () => Promise<void>
  if (which === 'client') {
    const client = await connect(stdioClient({ command: process.execPath, args: SERVER_ARGS, cwd: root }), { name: 'profile', version: '1' }, { era: 'legacy' })
    call = () => client.callTool('echo', args)
    close = () => client.close()
  } else {
    const client = new Client({ name: 'profile', version: '1' })
    await client.connect(new StdioClientTransport({ command: process.execPath, args: SERVER_ARGS, cwd: root }))
    call = () => client.callTool({ name: 'echo', arguments: args })
    close = () => client.close()
  }
  const calls = await keepBusy(inFlight, seconds, done => { call().then(done, error => { throw error }) })
  console.log(`${which} profile: ${calls} calls in ${seconds} s at ${inFlight} in flight (${(calls / seconds).toFixed(0)} calls/s under the profiler)`)
  await close()
}

/** Where a function lives, short: `lib/connection.ts`, `rxjs`, `node:internal/...`. */
function place(url: string): string {
  if (url === '') return ''
  const path = url.replace(/^file:\/\//, '')
  const modules = path.lastIndexOf('/node_modules/')
  if (modules >= 0) {
    const rest = path.slice(modules + '/node_modules/'.length).split('/')
    return rest[0]!.startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0]!
  }
  return path.startsWith(root) ? path.slice(root.length) : path
}

const isOwn = (where: string) => /^(lib|actors|transports|examples|host|bin|auth)\//.test(where)

/** Leaves out the first `skipMs` of the profile (start-up: module loading, schema compiling, JIT warmup). */
function summarize(file: string, skipMs = 1500, top = 25): void {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile
  const byId = new Map(profile.nodes.map(node => [node.id, node]))
  const parent = new Map<number, number>()
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id)
  const keyOf = (node: ProfileNode) => {
    const where = place(node.callFrame.url)
    // tsx hands V8 each module on one line, so a column tells two anonymous functions apart.
    const { functionName, lineNumber, columnNumber } = node.callFrame
    return `${functionName || '(anonymous)'}${where === '' ? '' : `  ${where}:${lineNumber + 1}${functionName === '' ? `:${columnNumber + 1}` : ''}`}`
  }
  const self = new Map<string, number>()
  const total = new Map<string, number>()
  const areas = new Map<string, number>()
  let all = 0
  let idle = 0
  let clock = 0
  for (let i = 0; i < profile.samples.length; i++) {
    // Each delta is the time since the previous sample; it belongs to the sample it precedes.
    const delta = profile.timeDeltas[i + 1] ?? 0
    clock += profile.timeDeltas[i] ?? 0
    if (clock < skipMs * 1000) continue
    const node = byId.get(profile.samples[i]!)!
    if (node.callFrame.functionName === '(idle)') { idle += delta; continue }
    all += delta
    const key = keyOf(node)
    self.set(key, (self.get(key) ?? 0) + delta)
    const where = place(node.callFrame.url)
    const area = isOwn(where) ? `rxmcp ${where.split('/')[0]}/` : where === '' ? node.callFrame.functionName
      : where.startsWith('node:') ? 'node internals' : where
    areas.set(area, (areas.get(area) ?? 0) + delta)
    // Total time: every distinct function on the stack, once.
    const seen = new Set<string>()
    for (let id: number | undefined = node.id; id !== undefined; id = parent.get(id)) {
      const ancestor = byId.get(id)!
      if (!isOwn(place(ancestor.callFrame.url))) continue
      const ancestorKey = keyOf(ancestor)
      if (seen.has(ancestorKey)) continue
      seen.add(ancestorKey)
      total.set(ancestorKey, (total.get(ancestorKey) ?? 0) + delta)
    }
  }
  const percent = (us: number) => `${(us / all * 100).toFixed(1).padStart(5)}%`
  const list = (title: string, entries: [string, number][]) => {
    console.log(`\n${title}`)
    for (const [key, us] of entries) console.log(`  ${percent(us)}  ${(us / 1000).toFixed(0).padStart(6)} ms  ${key}`)
  }
  const sorted = (map: Map<string, number>, filter: (key: string) => boolean = () => true) =>
    [...map].filter(([key]) => filter(key)).sort((a, b) => b[1] - a[1]).slice(0, top)
  console.log(`${file}\nafter the first ${skipMs} ms: busy ${(all / 1000).toFixed(0)} ms, idle ${(idle / 1000).toFixed(0)} ms`)
  list('self time by area', sorted(areas))
  list(`top ${top} functions by self time`, sorted(self))
  const ownKey = (key: string) => isOwn(key.split('  ')[1] ?? '')
  list("rxmcp's own functions by self time", sorted(self, ownKey))
  list("rxmcp's own functions by total time (self + callees)", sorted(total))
}

const [mode = 'server', first, second] = process.argv.slice(2)
installCleanup()
try {
  mkdirSync(profileDir, { recursive: true })
  const inFlight = Number(first ?? 64)
  const seconds = Number(second ?? 5)
  if (mode === 'client-load' || mode === 'official-client-load') await clientLoad(mode === 'client-load' ? 'client' : 'official-client', inFlight, seconds)
  else if (mode === 'summarize') summarize(first!, Number(second ?? 1500))
  else if (mode === 'client' || mode === 'official-client') summarize(await profileClient(mode, inFlight, seconds))
  else if (mode === 'server') summarize(await profileServer(inFlight, seconds))
  else if (mode === 'modern-server') summarize(await profileModernServer(inFlight, seconds))
  else if (mode === 'gateway') {
    const { file, skipMs } = await profileGateway(first === 'http' ? 'http' : 'stdio', second === 'modern' ? 'modern' : 'legacy', Number(process.argv[5] ?? 10))
    summarize(file, skipMs)
  }
  else throw new Error(`unknown mode ${mode}: server, modern-server, client, official-client or summarize`)
} catch (error) {
  console.error('profile failed:', error)
  process.exitCode = 1
} finally {
  killChildren()
}
