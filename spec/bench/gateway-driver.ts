/**
 * The call loop of the gateway bench (gateway-bench.ts), and a child process that runs it: the
 * comparator "our client's CPU per call" must be measured on the client as a user's build runs it
 * (bundled, built.ts), not in the bench's own process, which runs under tsx (esbuild's keepNames
 * wraps each function made at run time: 25-40% more client CPU per call on the stdio echo).
 *
 * As a child (`RXMCP_BENCH_DRIVER=1`, argv: `http <url>` or `stdio <json {command,args,cwd}>`), it
 * connects as the host connects its servers (httpClient / stdioClient, default era), says
 * `{ ready, era, serverPid }`, then for each `{ measure }` message runs the loop, says
 * `{ edge: 'start' | 'end' }` around the measured window (the parent reads every process's CPU
 * there, this one's from /proc), and `{ done: { calls, elapsedMs, error? } }`.
 */
import { connect, type McpClient } from '../../actors/client.ts'
import { httpClient } from '../../transports/http-client.ts'
import { stdioClient } from '../../transports/stdio.ts'

const ECHO = { text: 'hello' }
const delay = (ms: number) => new Promise(resolve => setTimeout(resolve, ms))

/** How one window runs: calls in flight, warmup, window, and an optional pace (calls/s at most). */
export interface LoopOptions {
  inFlight: number
  warmupMs: number
  windowMs: number
  pacePerSecond?: number
}

/**
 * Keeps `inFlight` echo calls going: a warmup, then a window in which completions are counted;
 * `onEdge` is called as the window starts and ends. Paced, the n-th call starts no earlier than
 * n / pace seconds after the start (still at most `inFlight` at once). Rejects with the first
 * failed call.
 */
export async function callLoop(client: McpClient, tool: string, options: LoopOptions, onEdge: (edge: 'start' | 'end') => void): Promise<{ calls: number; elapsedMs: number }> {
  // 0 warmup, 1 measured window, 2 stopping (no new call starts).
  let phase = 0
  let count = 0
  let failure: unknown
  const paceStart = performance.now()
  let startedCalls = 0
  const { pacePerSecond } = options
  const workers = Array.from({ length: options.inFlight }, async () => {
    while (phase < 2 && failure === undefined) {
      if (pacePerSecond !== undefined) {
        const wait = paceStart + startedCalls++ * 1000 / pacePerSecond - performance.now()
        if (wait > 1) await delay(wait)
        if (phase === 2) break
      }
      try {
        const result = await client.callTool(tool, ECHO)
        if ((result.content[0] as { text?: string } | undefined)?.text !== ECHO.text) throw new Error(`unexpected echo result ${JSON.stringify(result).slice(0, 200)}`)
      } catch (error) {
        failure ??= error
      }
      if (phase === 1) count++
    }
  })
  await delay(options.warmupMs)
  phase = 1
  onEdge('start')
  const started = performance.now()
  await delay(options.windowMs)
  onEdge('end')
  const elapsedMs = performance.now() - started
  const calls = count
  phase = 2
  await Promise.all(workers)
  if (failure !== undefined) throw failure
  return { calls, elapsedMs }
}

if (process.env.RXMCP_BENCH_DRIVER === '1' && process.send !== undefined) {
  const send = (message: object) => process.send!(message)
  const [kind, target] = process.argv.slice(2)
  const info = { name: 'rxmcp-gateway-bench-driver', version: '1' }
  let serverPid: number | undefined
  let client: McpClient
  if (kind === 'stdio') {
    const transport = stdioClient({ ...JSON.parse(target!), stderr: 'inherit' })
    client = await connect(transport, info)
    serverPid = transport.pid
  } else {
    client = await connect(httpClient(target!), info)
  }
  send({ ready: true, era: client.era, serverPid })
  process.on('message', (message: { measure?: LoopOptions; close?: boolean }) => {
    if (message.close === true) {
      void client.close().finally(() => process.exit(0))
      return
    }
    if (message.measure === undefined) return
    callLoop(client, 'echo', message.measure, edge => send({ edge })).then(
      done => send({ done }),
      (error: unknown) => send({ done: { calls: 0, elapsedMs: 0, error: error instanceof Error ? error.message : String(error) } }),
    )
  })
}
