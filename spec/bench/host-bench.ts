/**
 * The host part of `npm run bench` (`BENCH_ONLY=host`):
 *
 * - tools/call through the gateway against the same call made directly to the server, at 1 and 64
 *   in flight, each in its own process as deployed: the everything example over Streamable HTTP
 *   (a child), `rxmcp gateway --config` in front of it (a child, reaching it over Streamable HTTP),
 *   and the clients in this process; direct = client -> server, gateway = client -> gateway ->
 *   server. Interleaved rounds.
 * - the host's heap per supervised client: N stdio children (spec/fixtures/tiny-server.ts), the
 *   host process's heap before and after (gc'd), divided by N (the children's own memory is theirs).
 */
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import { filter, firstValueFrom } from 'rxjs'
import { spawn } from 'node:child_process'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { connect, type McpClient } from '../../actors/client.ts'
import { createHost } from '../../host/host.ts'
import { parseHostConfig } from '../../lib/host-config.ts'
import { streamableHttpClient } from '../../transports/http-client.ts'
import { startHttpServer } from './http-bench.ts'
import { within } from './procs.ts'

const root = fileURLToPath(new URL('../..', import.meta.url))

setFlagsFromString('--expose-gc')
const gc = runInNewContext('gc') as () => void

/** One row of the host bench. */
export interface HostBenchRow { inFlight: number; directPerSecond: number; gatewayPerSecond: number; ratio: number }

async function rate(client: McpClient, name: string, inFlight: number, ms: number): Promise<number> {
  let count = 0
  const end = performance.now() + ms
  await Promise.all(Array.from({ length: inFlight }, async () => {
    while (performance.now() < end) { await client.callTool(name, { text: 'hi' }); count++ }
  }))
  return count / (ms / 1000)
}

/** Runs both measures; prints and returns them. */
export async function runHostBench(seconds = 1): Promise<{ rows: HostBenchRow[]; bytesPerClient: number }> {
  const upstream = await startHttpServer('rxmcp')
  const scratch = await mkdtemp(join(tmpdir(), 'rxmcp-host-bench-'))
  const config = join(scratch, 'mcp.json')
  await writeFile(config, JSON.stringify({ mcpServers: { echo: { url: upstream.url.href } } }))
  const gatewayChild = spawn(process.execPath, ['--import', 'tsx', 'bin/rxmcp.ts', 'gateway', '--config', config, '--port', '0'], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] })
  const gatewayUrl = await within(new Promise<string>((resolve, reject) => {
    let seen = ''
    gatewayChild.stderr!.on('data', (chunk: Buffer) => { seen += chunk; const match = /serving (http:\/\/127\.0\.0\.1:\d+\/mcp)/.exec(seen); if (match) resolve(match[1]!) })
    gatewayChild.on('exit', code => reject(new Error(`the gateway exited ${code}: ${seen}`)))
  }), 30_000, 'the gateway did not print its URL')
  const direct = await connect(streamableHttpClient(upstream.url), { name: 'direct', version: '1' })
  const through = await connect(streamableHttpClient(gatewayUrl), { name: 'gateway', version: '1' })
  // The gateway lists the server's tools once it is ready.
  while (!(await through.listTools()).tools.some(tool => tool.name === 'echo__echo')) await new Promise(resolve => setTimeout(resolve, 50))
  const rows: HostBenchRow[] = []
  for (const inFlight of [1, 64]) {
    await rate(direct, 'echo', inFlight, 200)
    await rate(through, 'echo__echo', inFlight, 200)
    let directTotal = 0
    let gatewayTotal = 0
    const rounds = 3
    for (let round = 0; round < rounds; round++) {
      directTotal += await rate(direct, 'echo', inFlight, (seconds * 1000) / rounds)
      gatewayTotal += await rate(through, 'echo__echo', inFlight, (seconds * 1000) / rounds)
    }
    const row = { inFlight, directPerSecond: directTotal / rounds, gatewayPerSecond: gatewayTotal / rounds, ratio: gatewayTotal / directTotal }
    rows.push(row)
    console.log(`  ${String(inFlight).padStart(2)} in flight  direct ${row.directPerSecond.toFixed(0).padStart(6)} calls/s  gateway ${row.gatewayPerSecond.toFixed(0).padStart(6)} calls/s  ${row.ratio.toFixed(2)}x`)
  }
  await through.close()
  await direct.close()
  gatewayChild.kill('SIGTERM')
  upstream.child.kill('SIGTERM')
  await rm(scratch, { recursive: true, force: true })

  // Heap per supervised client: N children, the host's own heap.
  const count = 30
  const child = { command: process.execPath, args: ['--import', 'tsx', 'spec/fixtures/tiny-server.ts'] }
  const started = async (servers: number) => {
    const host = createHost(parseHostConfig({ mcpServers: Object.fromEntries(Array.from({ length: servers }, (_, i) => [`s${i}`, child])) }))
    await firstValueFrom(host.states.pipe(filter(states => states.size === servers && [...states.values()].every(state => state.status === 'ready'))))
    return host
  }
  // A first host loads every module the others need, so that the measure holds clients only.
  await (await started(2)).close()
  const settle = () => { gc(); gc(); return process.memoryUsage().heapUsed }
  const before = settle()
  const many = await started(count)
  const bytesPerClient = (settle() - before) / count
  console.log(`  heap per supervised client: ${(bytesPerClient / 1024).toFixed(1)} KiB (${count} stdio servers, the host process only)`)
  await many.close()
  return { rows, bytesPerClient }
}
