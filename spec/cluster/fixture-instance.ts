/**
 * One instance for the cluster fault tests: the everything server on Redis, plus `whoami` (which
 * process and cluster instance served the call) and `slow_task` (a task that runs a minute).
 * SIGTERM drains it (McpServer.drain), then it exits 0. EVENT_SHARDS, when set, is the event
 * store's number of shards.
 * Prints `listening <url> instance <pid>` when ready.
 */
import { map, timer } from 'rxjs'
import { streamableHttp } from '../../transports/streamable-http.ts'
import { redisScaleOut } from '../../transports/redis.ts'
import { createEverythingServer } from '../../examples/everything/everything.ts'

const shards = process.env.EVENT_SHARDS === undefined ? {} : { events: { shards: Number(process.env.EVENT_SHARDS) } }
const scale = await redisScaleOut(process.env.REDIS_URL!, { prefix: process.env.REDIS_PREFIX, ...shards })
const server = createEverythingServer({ ...scale.server })
server.tool('whoami', { description: 'Which instance served this call', inputSchema: { type: 'object', properties: {} } },
  () => ({ content: [{ type: 'text', text: JSON.stringify({ pid: process.pid, instance: scale.instanceId }) }] }))
server.tool('slow_task', { description: 'Runs a minute, as a task', inputSchema: { type: 'object', properties: {} }, execution: { taskSupport: 'optional' } },
  () => timer(60_000).pipe(map(() => ({ content: [{ type: 'text' as const, text: 'done' }] }))))
const http = streamableHttp({ host: '127.0.0.1', port: 0, retryMs: 50, ...scale.http })
await server.listen(http)
process.stdout.write(`listening ${http.url} instance ${process.pid}\n`)
// SIGTERM drains (issue 27): the requests in flight finish, the sessions go to the other instances.
process.once('SIGTERM', () => void server.drain({ timeoutMs: 10_000 }).then(() => scale.close()).then(() => process.exit(0)))
