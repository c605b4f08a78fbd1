// The one-command scale-out deployment: Redis, N rxmcp instances, nginx in front.
//   npm run cluster                         3 instances, nginx on 127.0.0.1:3000, a fresh redis-server
//   npm run cluster -- --instances 5 --port 8080
//   REDIS_URL=redis://10.0.0.5:6379 npm run cluster   use that Redis instead of starting one
//   npm run cluster -- --restart-every 30    a rolling restart every 30 s
// Prints the balancer's MCP URL and runs until Ctrl-C or SIGTERM, which stop everything it started.
// A rolling restart of every instance, to watch your clients carry on: press `r` (in a terminal),
// send SIGUSR2 (`kill -USR2 <pid>`), or pass --restart-every. Each instance in turn: a fresh one
// starts, nginx is reloaded with it in place of the old one, and the old one gets SIGTERM (it
// drains: its requests in flight finish, its sessions go to the others, its streams close so the
// clients resume elsewhere) and exits 0.
import { spawnNginx } from './spawn-nginx.ts'
import { startRedis } from './spawn-redis.ts'
import { spawnInstance, type SpawnedInstance } from './spawn-instance.ts'

const flag = (name: string, fallback: number) => {
  const index = process.argv.indexOf(name)
  return index < 0 ? fallback : Number(process.argv[index + 1])
}
const count = flag('--instances', 3)
const port = flag('--port', 3000)
const restartEvery = flag('--restart-every', 0)
if (!Number.isInteger(count) || count < 1) throw new TypeError('--instances takes a whole number of at least 1')

// Set by the first signal: the exit notices below go quiet, and a repeat (Ctrl-C reaches npm, tsx and
// this process, and tsx relays it once more) does not kill the process halfway through stopping.
let isStopping = false
const redis = process.env.REDIS_URL === undefined ? await startRedis() : { url: process.env.REDIS_URL, stop: async () => {} }
// The instances nginx balances over (a rolling restart replaces them one by one).
let instances = await Promise.all(Array.from({ length: count }, () => spawnInstance({ redisUrl: redis.url })))
/** Instances being replaced: their exit is expected. */
const leaving = new Set<SpawnedInstance>()
const watchExit = (instance: SpawnedInstance) => {
  void instance.exited.then(code => {
    if (!isStopping && !leaving.has(instance)) process.stderr.write(`rxmcp cluster: instance ${instance.pid} exited (${code}); nginx sends its requests to the others\n`)
  })
}
for (const instance of instances) watchExit(instance)
const nginx = await spawnNginx({ upstreams: instances.map(instance => instance.address), port })
process.stdout.write(`rxmcp cluster: ${nginx.url}/mcp  (nginx -> ${instances.map(instance => instance.address).join(', ')}; redis ${redis.url})\n`)

// Set while a rolling restart runs: a second request waits for none.
let isRestarting = false
const rollingRestart = async () => {
  if (isRestarting || isStopping) return
  isRestarting = true
  const started = Date.now()
  process.stdout.write(`rxmcp cluster: rolling restart of ${instances.length} instances\n`)
  try {
    for (const old of [...instances]) {
      if (isStopping) return
      const fresh = await spawnInstance({ redisUrl: redis.url })
      watchExit(fresh)
      instances = [...instances.filter(instance => instance !== old), fresh]
      await nginx.reload(instances.map(instance => instance.address))
      leaving.add(old)
      const draining = Date.now()
      await old.stop()
      process.stdout.write(`rxmcp cluster: instance ${old.pid} -> ${fresh.pid} (${fresh.address}); drained and exited ${await old.exited} in ${Date.now() - draining} ms\n`)
    }
    process.stdout.write(`rxmcp cluster: rolling restart done in ${Date.now() - started} ms\n`)
  } catch (error) {
    process.stderr.write(`rxmcp cluster: rolling restart failed: ${error instanceof Error ? error.message : String(error)}\n`)
  } finally {
    isRestarting = false
  }
}
process.on('SIGUSR2', () => void rollingRestart())
if (restartEvery > 0) setInterval(() => void rollingRestart(), restartEvery * 1000).unref()
if (process.stdin.isTTY) {
  process.stdin.setRawMode(true)
  process.stdin.on('data', data => {
    const key = data.toString()
    if (key === 'r') void rollingRestart()
    // Raw mode turns Ctrl-C into a byte: stop as the signal would.
    else if (key === '\u0003') void stop()
  })
  process.stdout.write('rxmcp cluster: press r for a rolling restart, Ctrl-C to stop\n')
}

const stop = async () => {
  if (isStopping) return
  isStopping = true
  if (process.stdin.isTTY) { process.stdin.setRawMode(false); process.stdin.pause() }
  await nginx.stop()
  await Promise.all(instances.map(instance => instance.stop()))
  await redis.stop()
  process.exit(0)
}
process.on('SIGINT', () => void stop())
process.on('SIGTERM', () => void stop())
