/**
 * The tasks part of `npm run bench` (`BENCH_ONLY=tasks`): what running a tool call as a task costs
 * against the same call made plainly, on the same rxmcp server and transport, in one process
 * (server and driver share the CPU, as in a test; the ratio is what to read).
 *
 * - plain: `tools/call` of a tool that answers at once.
 * - task: the same call as a task, followed to its end: legacy `params.task` -> `tasks/get` until
 *   completed -> `tasks/result`; modern (the tasks extension declared in `_meta`) -> `tasks/get`
 *   until completed, the result inline.
 * - at 1 and 64 in flight, over memory and Streamable HTTP; then the heap held per live task
 *   (tasks that have not ended, gc'd before and after).
 *
 * The official SDK v1.32's tasks cannot be the baseline here: its task tools hand the work to the
 * application (createTask / getTask / getTaskResult callbacks over its own store), so there is no
 * like-for-like "same tool, as a task" call to time; SDK v2 has no tasks.
 */
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import { firstValueFrom } from 'rxjs'
import { createServer, type McpServer } from '../../actors/server.ts'
import { createMemoryTaskStore } from '../../actors/tasks/store.ts'
import { createConnection, type Connection } from '../../lib/connection.ts'
import { resultOf } from '../../lib/operators/progress.ts'
import type { JsonObject } from '../../lib/jsonrpc/message.ts'
import { createMemoryPair } from '../../transports/memory.ts'
import { streamableHttp } from '../../transports/streamable-http.ts'
import { streamableHttpClient } from '../../transports/http-client.ts'

setFlagsFromString('--expose-gc')
const gc = runInNewContext('gc') as () => void

const META = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientCapabilities': { extensions: { 'io.modelcontextprotocol/tasks': {} } },
  'io.modelcontextprotocol/clientInfo': { name: 'tasks-bench', version: '1' },
}
const PLAIN_META = { ...META, 'io.modelcontextprotocol/clientCapabilities': {} }

/** One row of the tasks bench. */
export interface TasksBenchRow { transport: string; era: string; inFlight: number; plainPerSecond: number; taskPerSecond: number; overheadUs: number }

function makeServer(): { server: McpServer; release: () => void } {
  const server = createServer({ name: 'tasks-bench', version: '1' }, {
    // Every bound out of the way: one driver (one address, anonymous over HTTP) makes all the tasks.
    tasks: {
      store: createMemoryTaskStore({ maxTasks: 2_000_000, maxTasksPerOwner: 2_000_000, maxTasksPerAddress: 2_000_000, defaultTtlMs: 60_000 }),
      maxRunningTasks: 10_000, maxRunningTasksPerOwner: 10_000, maxRunningTasksPerAddress: 10_000,
    },
  })
  server.tool('work', { execution: { taskSupport: 'optional' } }, () => ({ content: [{ type: 'text', text: 'done' }] }))
  const waiting: Array<() => void> = []
  server.tool('held', { execution: { taskSupport: 'optional' } }, () => new Promise(resolve => waiting.push(() => resolve({ content: [] }))))
  return { server, release: () => waiting.splice(0).forEach(open => open()) }
}

type Call = (method: string, params: JsonObject) => Promise<JsonObject>

/** A raw connection to `server` over memory or Streamable HTTP, legacy (initialized) or modern. */
async function open(server: McpServer, transport: 'memory' | 'http', era: 'legacy' | 'modern'): Promise<{ call: Call; close: () => Promise<void> }> {
  let connection: Connection
  let stop = async () => {}
  if (transport === 'memory') {
    const [near, far] = createMemoryPair()
    await server.listen(far)
    connection = createConnection(near)
  } else {
    const http = streamableHttp({ port: 0 })
    await server.listen(http)
    connection = createConnection(streamableHttpClient(http.url!))
    stop = () => http.close()
  }
  connection.start()
  const call: Call = (method, params) => firstValueFrom(connection.request(method, params, { progress: false, timeout: 0 }).pipe(resultOf()))
  if (era === 'legacy') {
    await call('initialize', { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'tasks-bench', version: '1' } })
    await connection.notify('notifications/initialized')
  }
  return { call, close: async () => { await connection.close(); await stop() } }
}

/** One call, plain or as a task followed to its end. */
async function once(call: Call, era: 'legacy' | 'modern', asTask: boolean): Promise<void> {
  if (!asTask) {
    const result = await call('tools/call', era === 'modern' ? { name: 'work', _meta: PLAIN_META } : { name: 'work' })
    if (!Array.isArray(result.content)) throw new Error('plain call without content')
    return
  }
  if (era === 'legacy') {
    const { task } = await call('tools/call', { name: 'work', task: {} }) as { task: { taskId: string } }
    while ((await call('tasks/get', { taskId: task.taskId })).status !== 'completed');
    const result = await call('tasks/result', { taskId: task.taskId })
    if (!Array.isArray(result.content)) throw new Error('task without result')
    return
  }
  const created = await call('tools/call', { name: 'work', _meta: META })
  for (;;) {
    const task = await call('tasks/get', { taskId: created.taskId as string, _meta: META })
    if (task.status === 'completed') return
  }
}

/** Calls per second of `ms` with `inFlight` loops each running `once` back to back. */
async function rate(call: Call, era: 'legacy' | 'modern', asTask: boolean, inFlight: number, ms: number): Promise<number> {
  let count = 0
  const end = performance.now() + ms
  await Promise.all(Array.from({ length: inFlight }, async () => {
    while (performance.now() < end) { await once(call, era, asTask); count++ }
  }))
  return count / (ms / 1000)
}

/** Runs the comparison; prints and returns the rows, and the bytes held per live task. */
export async function runTasksBench(seconds = 1): Promise<{ rows: TasksBenchRow[]; bytesPerLiveTask: number }> {
  const rows: TasksBenchRow[] = []
  for (const transport of ['memory', 'http'] as const) {
    for (const era of ['legacy', 'modern'] as const) {
      for (const inFlight of [1, 64]) {
        const { server } = makeServer()
        const side = await open(server, transport, era)
        await rate(side.call, era, false, inFlight, 200)
        await rate(side.call, era, true, inFlight, 200)
        const plainPerSecond = await rate(side.call, era, false, inFlight, seconds * 1000)
        const taskPerSecond = await rate(side.call, era, true, inFlight, seconds * 1000)
        await side.close()
        await server.close()
        const row = { transport, era, inFlight, plainPerSecond, taskPerSecond, overheadUs: 1e6 / taskPerSecond - 1e6 / plainPerSecond }
        rows.push(row)
        console.log(`  ${transport.padEnd(6)} ${era.padEnd(6)} ${String(inFlight).padStart(2)} in flight  plain ${plainPerSecond.toFixed(0).padStart(6)}/s  task ${taskPerSecond.toFixed(0).padStart(6)}/s  ${(plainPerSecond / taskPerSecond).toFixed(2)}x  +${row.overheadUs.toFixed(0)} µs per task`)
      }
    }
  }
  // Heap per live task: tasks whose work has not ended (a handler waiting), in the legacy era over memory.
  const { server, release } = makeServer()
  const side = await open(server, 'memory', 'legacy')
  const live = 5_000
  gc()
  const before = process.memoryUsage().heapUsed
  for (let i = 0; i < live; i++) await side.call('tools/call', { name: 'held', task: {} })
  gc()
  const bytesPerLiveTask = (process.memoryUsage().heapUsed - before) / live
  console.log(`  heap per live task: ${bytesPerLiveTask.toFixed(0)} bytes (${live} tasks waiting on their handler)`)
  release()
  await side.close()
  await server.close()
  return { rows, bytesPerLiveTask }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  console.log('tasks: a tool call as a task (create, poll to completion, result) against the same call made plainly')
  await runTasksBench(Number(process.env.BENCH_SECONDS ?? 1))
}
