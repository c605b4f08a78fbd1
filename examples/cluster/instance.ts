// One instance of a scaled-out MCP server: the everything server on Streamable HTTP, sharing its
// sessions, tasks, events and requestState key with every other instance through Redis.
//   PORT=3001 REDIS_URL=redis://127.0.0.1:6379 npx tsx examples/cluster/instance.ts
// Prints `listening <url> instance <pid>` once it accepts requests (PORT unset or 0: any free port);
// SIGTERM or SIGINT drains it (a rolling restart: its /health answers 503, it takes no new session,
// its requests in flight finish within DRAIN_TIMEOUT_MS, default 10 s, its sessions are handed over
// to the other instances and its streams closed, the clients resume there), closes the Redis
// connections, then exits 0.
import { streamableHttp } from '../../transports/streamable-http.ts'
import { redisScaleOut } from '../../transports/redis.ts'
import { createEverythingServer } from '../everything/everything.ts'

const scale = await redisScaleOut(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379', { prefix: process.env.REDIS_PREFIX })
const server = createEverythingServer({ ...scale.server })
// Behind nginx every socket is nginx's: the client is the last X-Forwarded-For entry, the one nginx
// appends ($proxy_add_x_forwarded_for), so per-client budgets count clients, not the proxy. Trust it
// only because the instance listens on loopback, where nothing but nginx reaches it.
const clientAddress = (request: { header(name: string): string | null }) => request.header('x-forwarded-for')?.split(',').at(-1)?.trim() || undefined
const http = streamableHttp({ host: '127.0.0.1', port: Number(process.env.PORT ?? 0), ...scale.http, clientAddress })
await server.listen(http)
// Health changes go to stderr: stdout carries only the ready line.
const health = scale.health.subscribe(state => process.stderr.write(`instance ${process.pid}: redis ${state}\n`))
process.stdout.write(`listening ${http.url} instance ${process.pid}\n`)

// Set by the first signal: a repeat (Ctrl-C reaches the whole process group, and run.ts sends
// SIGTERM too) is ignored instead of killing the process halfway through closing.
let isClosing = false
const stop = async () => {
  if (isClosing) return
  isClosing = true
  const started = Date.now()
  await server.drain({
    timeoutMs: Number(process.env.DRAIN_TIMEOUT_MS ?? 10_000),
    onProgress: step => process.stderr.write(`instance ${process.pid}: ${step}\n`),
  })
  process.stderr.write(`instance ${process.pid}: drained in ${Date.now() - started} ms\n`)
  health.unsubscribe()
  await scale.close()
  process.exit(0)
}
process.on('SIGTERM', () => void stop())
process.on('SIGINT', () => void stop())
