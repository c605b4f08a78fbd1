// The everything server as a Cloudflare Worker, on workerd (Cloudflare's runtime, from npm):
//   npx tsx examples/workers/serve.ts 8787            then point an MCP client at the printed URL
//   npx tsx examples/workers/serve.ts 8787 8788 ...   one Worker isolate per port, one set of sessions
// Bundles worker.ts with esbuild into a temporary directory, writes a workerd config beside it
// (workerd-config.ts) and runs `workerd serve`, listening on 127.0.0.1:PORT (0: any free port).
// With more ports, each is served by a Worker of its own sharing the Durable Objects, as Cloudflare
// serves a Worker from many isolates. It prints one line, the endpoints' URLs (space-separated,
// in the order of the ports), once workerd listens; it stops workerd on SIGINT or SIGTERM, when
// its stdin (a pipe) closes, and when its parent goes away.
import { spawn } from 'node:child_process'
import { fstatSync } from 'node:fs'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { randomBytes } from 'node:crypto'
import { stop as stopEsbuild } from 'esbuild'
import { bundleWorker } from './bundle.ts'
import { socketName, workerdConfig } from './workerd-config.ts'

/**
 * Bound on workerd's exit after SIGTERM before it is killed. workerd drains the requests in flight
 * first, and an open SSE stream never ends by itself (its sessions are in memory and go anyway).
 */
const STOP_TIMEOUT_MS = 1_000
/** How often the parent's presence is checked (a parent that dies leaves this process re-parented). */
const PARENT_CHECK_MS = 1_000

const ports = process.argv.slice(2).map(Number)
if (ports.length === 0 || !ports.every(port => Number.isInteger(port) && port >= 0 && port <= 65_535)) {
  process.stderr.write('usage: npx tsx examples/workers/serve.ts PORT [PORT...]   (0: any free port)\n')
  process.exit(2)
}

/** The workerd binary of the `workerd` npm package (its main export is the binary's path). */
const workerdBinary: string = createRequire(import.meta.url)('workerd').default

const bundle = await bundleWorker('examples/workers/worker.ts')
// esbuild's service process is not needed again: it goes now rather than outlive this one.
await stopEsbuild()
const dir = await mkdtemp(join(tmpdir(), 'rxmcp-workerd-'))
for (const module of bundle.modules) await writeFile(join(dir, module.name), module.code)
await writeFile(join(dir, 'config.capnp'), workerdConfig({
  modules: bundle.modules.map(module => module.name),
  addresses: ports.map(port => `127.0.0.1:${port}`),
  // A fresh key per run: every isolate of this workerd shares it (deployed, it is a Worker secret).
  text: { REQUEST_STATE_KEY: randomBytes(32).toString('base64url') },
}))

// fd 3 is workerd's control channel: it reports there, as a JSON line, the port each socket listens on.
const workerd = spawn(workerdBinary, ['serve', join(dir, 'config.capnp'), '--control-fd=3'], { cwd: dir, stdio: ['ignore', 'inherit', 'inherit', 'pipe'] })
const exited = new Promise<void>(resolve => workerd.once('exit', () => resolve()))

/** The stop under way, once something asked for it: every later ask waits for the same one. */
let stopping: Promise<never> | undefined
function stop(code: number): Promise<never> {
  stopping ??= (async () => {
    if (workerd.exitCode === null && workerd.signalCode === null) {
      workerd.kill('SIGTERM')
      const timer = setTimeout(() => workerd.kill('SIGKILL'), STOP_TIMEOUT_MS)
      await exited
      clearTimeout(timer)
    }
    await rm(dir, { recursive: true, force: true })
    process.exit(code)
  })()
  return stopping
}

process.once('SIGINT', () => void stop(0))
process.once('SIGTERM', () => void stop(0))
process.once('exit', () => { if (workerd.exitCode === null) workerd.kill('SIGKILL') })
// workerd gone by itself (a config it refused, a crash): this ends too, as a failure.
void exited.then(() => void stop(1))

// A parent that holds this process's stdin as a pipe ends it by closing the pipe (or by dying).
const stdin = fstatSync(0)
if (stdin.isFIFO() || stdin.isSocket()) {
  process.stdin.on('end', () => void stop(0)).on('close', () => void stop(0)).resume()
}
const parent = process.ppid
setInterval(() => { if (process.ppid !== parent) void stop(0) }, PARENT_CHECK_MS).unref()

/** The port each socket listens on, by socket name, as workerd reports them. */
const listening = new Map<string, number>()
const control = createInterface({ input: workerd.stdio[3] as NodeJS.ReadableStream })
for await (const line of control) {
  const message = JSON.parse(line) as { event?: string; socket?: string; port?: number }
  if (message.event === 'listen' && message.socket !== undefined && message.port !== undefined) listening.set(message.socket, message.port)
  if (listening.size === ports.length) {
    process.stdout.write(`${ports.map((_, n) => `http://127.0.0.1:${listening.get(socketName(n))}/mcp`).join(' ')}\n`)
    break
  }
}
