/**
 * Bytes the Streamable HTTP server allocates per echo call, rxmcp's everything server against the
 * no-library floor (http-floor-server.ts), both eras, 64 calls in flight (legacy: over 16 sessions).
 * Each server runs built (built.ts) under `--trace-gc` with a 1 MiB young generation, so it
 * collects every MiB or so and prints each collection's heap size before and after; what it
 * allocated between two collections is the size before the second less the size after the first.
 * Summed over the collections of a window of CALLS calls (after a warmup) and divided by the calls:
 * bytes per call, everything the process allocated for them (node:http's share included, which the
 * floor shows alone), within about 1 MiB / CALLS.
 *
 *   npx tsx spec/bench/alloc-http.ts [calls=20000]
 */
import { spawn } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { serverArgs } from './built.ts'
import { openSession, post } from './http-bench.ts'
import { modernEchoParams, postModern } from './modern-bench.ts'
import { installCleanup, within } from './procs.ts'

const root = fileURLToPath(new URL('../..', import.meta.url))
const CALLS = Number(process.argv[2] ?? 20_000)
const SERVERS = {
  rxmcp: ['--import', 'tsx', 'examples/everything/server.ts', '--http', '0'],
  floor: ['--import', 'tsx', 'spec/bench/http-floor-server.ts', '0'],
} as const
installCleanup()

/** One collection's heap sizes in MB: before and after. */
const GC_LINE = /(Scavenge|Mark-Compact|Mark-sweep)[^\d]*([\d.]+) \([\d.]+\) -> ([\d.]+) \([\d.]+\) MB/

async function measure(side: keyof typeof SERVERS, era: 'legacy' | 'modern'): Promise<number> {
  const child = spawn(process.execPath, ['--trace-gc', '--max-semi-space-size=1', ...serverArgs(SERVERS[side], root)], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] })
  const sizes: [number, number][] = []
  let pending = ''
  child.stdout!.on('data', (chunk: Buffer) => {
    pending += chunk.toString('utf8')
    const lines = pending.split('\n')
    pending = lines.pop()!
    for (const line of lines) {
      const match = GC_LINE.exec(line)
      if (match !== null) sizes.push([Number(match[2]), Number(match[3])])
    }
  })
  try {
    const url = new URL(await within(new Promise<string>(resolve => {
      let seen = ''
      child.stderr!.on('data', (chunk: Buffer) => { seen += chunk; const found = /(http:\/\/127\.0\.0\.1:\d+\/mcp)/.exec(seen); if (found) resolve(found[1]!) })
    }), 20_000, `${side} printed no URL`))
    const sessions = era === 'legacy' ? await Promise.all(Array.from({ length: 16 }, () => openSession(url))) : []
    const legacy = JSON.stringify({ name: 'echo', arguments: { text: 'hello' } })
    const modern = modernEchoParams('hello')
    let id = 0
    const run = async (calls: number) => {
      let left = calls
      const lane = async (index: number) => {
        while (left-- > 0) {
          if (era === 'legacy') await post(url, `{"jsonrpc":"2.0","id":${++id},"method":"tools/call","params":${legacy}}`, sessions[index % 16])
          else await postModern(url, ++id, 'tools/call', modern, 'echo')
        }
      }
      await Promise.all(Array.from({ length: 64 }, (_, index) => lane(index)))
    }
    await run(CALLS / 4)
    await new Promise(resolve => setTimeout(resolve, 300))
    const first = sizes.length
    await run(CALLS)
    await new Promise(resolve => setTimeout(resolve, 300))
    const window = sizes.slice(first - 1)
    let mb = 0
    for (let i = 1; i < window.length; i++) mb += window[i]![0] - window[i - 1]![1]
    return mb * 1024 * 1024 / CALLS
  } finally {
    child.kill('SIGKILL')
  }
}

const kib = (bytes: number) => `${(bytes / 1024).toFixed(1)} KiB`
for (const era of ['legacy', 'modern'] as const) {
  const floor = await measure('floor', era)
  const rxmcp = await measure('rxmcp', era)
  console.log(`${era}: allocated per call, rxmcp ${kib(rxmcp)}, floor ${kib(floor)} (rxmcp's own ${kib(rxmcp - floor)}, ${(rxmcp / floor).toFixed(2)}x)`)
}
