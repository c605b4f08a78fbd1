/**
 * Startup and install footprint, the costs a host pays each time it spawns a stdio server and once
 * when it installs the package. Part of `npm run bench` (groups `cold` and `footprint`), runnable
 * alone with `npx tsx spec/bench/startup.ts [cold] [footprint]`.
 *
 * - Cold start: spawn -> `initialize` answered, for a stdio server on the built package (dist/, plain
 *   node, no loader) importing the root or only the `rxmcp/server` and `rxmcp/transports/stdio`
 *   subpaths, a server with no MCP library, and the official SDK's McpServer. The servers import
 *   rxmcp by its package name, so Node resolves it through package.json's `exports` as it does
 *   for an installed package (the files live in .bench/cold/, inside this package). Runs are
 *   interleaved (one of each, then again) so load on the machine hits all four alike; the median
 *   of `BENCH_COLD_RUNS` (default 15) is reported, with the server's resident memory and CPU time
 *   (all its threads, from /proc, robust when the machine is busy) right after it answered, each
 *   against the no-library server's, and issue 24's target (at most 1.3x) on the rxmcp rows.
 * - Footprint: `npm pack`, then `npm install <tarball>` into an empty project (this needs the npm
 *   registry), counting the packages and bytes it adds; the same for the official SDK.
 */
import { execFileSync, spawn } from 'node:child_process'
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { rss } from './procs.ts'

const root = fileURLToPath(new URL('../..', import.meta.url))
const OFFICIAL_SDK = '@modelcontextprotocol/sdk@1.32.2'
/** Issue 24: an rxmcp stdio server starts in at most this times the no-library server's time. */
export const COLD_START_TARGET = 1.3

const INITIALIZE = JSON.stringify({
  jsonrpc: '2.0', id: 1, method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'cold-start', version: '1.0.0' } },
}) + '\n'

/** The three servers, as plain ES modules; each registers one echo tool. */
const SERVERS: Record<string, string> = {
  rxmcp: [
    "import { createServer, stdio } from 'rxmcp'",
    "const server = createServer({ name: 'cold', version: '1.0.0' })",
    "server.tool('echo', { inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] } },",
    "  ({ text }) => ({ content: [{ type: 'text', text }] }))",
    'await server.listen(stdio())',
  ].join('\n'),
  // The same server importing only what it uses: the server and the stdio transport subpaths.
  'rxmcp-subpaths': [
    "import { createServer } from 'rxmcp/server'",
    "import { stdio } from 'rxmcp/transports/stdio'",
    "const server = createServer({ name: 'cold', version: '1.0.0' })",
    "server.tool('echo', { inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] } },",
    "  ({ text }) => ({ content: [{ type: 'text', text }] }))",
    'await server.listen(stdio())',
  ].join('\n'),
  floor: [
    "import { createInterface } from 'node:readline'",
    'createInterface({ input: process.stdin }).on("line", line => {',
    '  const message = JSON.parse(line)',
    "  if (message.method === 'initialize') process.stdout.write(JSON.stringify({ jsonrpc: '2.0', id: message.id,",
    "    result: { protocolVersion: message.params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: 'floor', version: '1.0.0' } } }) + '\\n')",
    '})',
  ].join('\n'),
  official: [
    "import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js'",
    "import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js'",
    "import { z } from 'zod'",
    "const server = new McpServer({ name: 'cold', version: '1.0.0' })",
    "server.registerTool('echo', { inputSchema: { text: z.string() } }, ({ text }) => ({ content: [{ type: 'text', text }] }))",
    'await server.connect(new StdioServerTransport())',
  ].join('\n'),
}

/** CPU time of a process so far, all its threads, in milliseconds (/proc/<pid>/task/<tid>/schedstat, nanoseconds). */
function threadsCpuMs(pid: number): number {
  let nanoseconds = 0
  for (const thread of readdirSync(`/proc/${pid}/task`)) {
    try {
      nanoseconds += Number(readFileSync(`/proc/${pid}/task/${thread}/schedstat`, 'utf8').split(' ')[0])
    } catch {
      // The thread ended while we read.
    }
  }
  return nanoseconds / 1e6
}

/** Spawns one server and times spawn -> the initialize answer; then reads its RSS and CPU and kills it. */
function coldStart(file: string): Promise<{ ms: number; rss: number; cpuMs: number }> {
  return new Promise((resolve, reject) => {
    const started = process.hrtime.bigint()
    const child = spawn(process.execPath, [file], { cwd: root, stdio: ['pipe', 'pipe', 'inherit'], env: { ...process.env, NODE_OPTIONS: '' } })
    let output = ''
    const guard = setTimeout(() => { child.kill('SIGKILL'); reject(new Error(`${file} did not answer initialize`)) }, 30_000)
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString('utf8')
      if (!output.includes('\n')) return
      const ms = Number(process.hrtime.bigint() - started) / 1e6
      const resident = rss(child.pid!)
      const cpuMs = threadsCpuMs(child.pid!)
      clearTimeout(guard)
      child.kill('SIGKILL')
      resolve({ ms, rss: resident, cpuMs })
    })
    child.on('error', reject)
    child.stdin.write(INITIALIZE)
  })
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!

export interface ColdStartResult {
  name: string; medianMs: number; rssMiB: number; ratioToFloor: number
  /** CPU of the server until it answered (all threads), median, and its ratio to the no-library server's. */
  cpuMs: number; cpuRatioToFloor: number
  /** Issue 24's target for the ratio (rxmcp rows only). */
  target?: string
}

/** Cold start of the four servers, interleaved; the rxmcp servers run on dist/ (run `npm run build` first). */
export async function runColdStart(runs = Number(process.env.BENCH_COLD_RUNS ?? 15)): Promise<ColdStartResult[]> {
  const dir = join(root, '.bench', 'cold')
  mkdirSync(dir, { recursive: true })
  const files = Object.fromEntries(Object.entries(SERVERS).map(([name, source]) => {
    const file = join(dir, `${name}.mjs`)
    writeFileSync(file, source)
    return [name, file]
  }))
  const samples: Record<string, { ms: number[]; rss: number[]; cpuMs: number[] }> = {}
  for (const name of Object.keys(files)) {
    samples[name] = { ms: [], rss: [], cpuMs: [] }
    await coldStart(files[name]!) // warm the file cache once, unmeasured
  }
  for (let run = 0; run < runs; run++) {
    for (const name of run % 2 === 0 ? Object.keys(files) : Object.keys(files).reverse()) {
      const sample = await coldStart(files[name]!)
      samples[name]!.ms.push(sample.ms)
      samples[name]!.rss.push(sample.rss)
      samples[name]!.cpuMs.push(sample.cpuMs)
    }
  }
  const floor = median(samples.floor!.ms)
  const floorCpu = median(samples.floor!.cpuMs)
  return Object.entries(samples).map(([name, { ms, rss: resident, cpuMs }]) => ({
    name, medianMs: round(median(ms)), rssMiB: round(median(resident) / 2 ** 20), ratioToFloor: round(median(ms) / floor),
    cpuMs: round(median(cpuMs)), cpuRatioToFloor: round(median(cpuMs) / floorCpu),
    ...(name.startsWith('rxmcp') ? { target: `<= ${COLD_START_TARGET}x` } : {}),
  }))
}

export interface FootprintResult { name: string; packages: number; bytes: number; megabytes: number }

/** Packages (besides the one installed) and bytes that `npm install <spec>` adds to an empty project. */
function footprint(name: string, spec: string): FootprintResult {
  const project = mkdtempSync(join(tmpdir(), 'rxmcp-footprint-'))
  try {
    writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'empty', version: '1.0.0', type: 'module' }))
    execFileSync('npm', ['install', '--no-audit', '--no-fund', spec], { cwd: project, stdio: 'ignore' })
    const lock = JSON.parse(readFileSync(join(project, 'package-lock.json'), 'utf8')) as { packages: Record<string, unknown> }
    const installed = Object.keys(lock.packages).filter(key => key !== '')
    const bytes = sizeOf(join(project, 'node_modules'))
    return { name, packages: installed.length - 1, bytes, megabytes: round(bytes / 1e6) }
  } finally {
    rmSync(project, { recursive: true, force: true })
  }
}

/** Apparent size of every file under a folder (what the tarballs unpacked to). */
function sizeOf(path: string): number {
  let total = 0
  for (const entry of readdirSync(path, { withFileTypes: true })) {
    const full = join(path, entry.name)
    if (entry.isDirectory()) total += sizeOf(full)
    else if (entry.isFile()) total += statSync(full).size
  }
  return total
}

/** Footprint of this package (packed from the working tree) and of the official SDK. */
export function runFootprint(): FootprintResult[] {
  const scratch = mkdtempSync(join(tmpdir(), 'rxmcp-pack-'))
  try {
    const report = JSON.parse(execFileSync('npm', ['pack', '--json', '--pack-destination', scratch], { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).replace(/^[^[]*/, '')) as [{ filename: string }]
    return [footprint('rxmcp', join(scratch, report[0].filename)), footprint('official', OFFICIAL_SDK)]
  } finally {
    rmSync(scratch, { recursive: true, force: true })
  }
}

function round(value: number): number {
  return Math.round(value * 100) / 100
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const wanted = new Set(process.argv.slice(2).length > 0 ? process.argv.slice(2) : ['cold', 'footprint'])
  if (wanted.has('cold')) {
    execFileSync('npm', ['run', 'build'], { cwd: root, stdio: 'ignore' })
    console.table(await runColdStart())
  }
  if (wanted.has('footprint')) console.table(runFootprint())
}
