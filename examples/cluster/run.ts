// The one-command scale-out deployment: Redis, N rxmcp instances, nginx in front.
//   npm run cluster                         3 instances, nginx on 127.0.0.1:3000, a fresh redis-server
//   npm run cluster -- --instances 5 --port 8080
//   REDIS_URL=redis://10.0.0.5:6379 npm run cluster   use that Redis instead of starting one
// Prints the balancer's MCP URL and runs until Ctrl-C or SIGTERM, which stop everything it started.
import { spawnNginx } from './spawn-nginx.ts'
import { startRedis } from './spawn-redis.ts'
import { spawnInstance } from './spawn-instance.ts'

const flag = (name: string, fallback: number) => {
  const index = process.argv.indexOf(name)
  return index < 0 ? fallback : Number(process.argv[index + 1])
}
const count = flag('--instances', 3)
const port = flag('--port', 3000)
if (!Number.isInteger(count) || count < 1) throw new TypeError('--instances takes a whole number of at least 1')

// Set by the first signal: the exit notices below go quiet, and a repeat (Ctrl-C reaches npm, tsx and
// this process, and tsx relays it once more) does not kill the process halfway through stopping.
let isStopping = false
const redis = process.env.REDIS_URL === undefined ? await startRedis() : { url: process.env.REDIS_URL, stop: async () => {} }
const instances = await Promise.all(Array.from({ length: count }, () => spawnInstance({ redisUrl: redis.url })))
for (const instance of instances) {
  void instance.exited.then(code => { if (!isStopping) process.stderr.write(`rxmcp cluster: instance ${instance.pid} exited (${code}); nginx sends its requests to the others\n`) })
}
const nginx = await spawnNginx({ upstreams: instances.map(instance => instance.address), port })
process.stdout.write(`rxmcp cluster: ${nginx.url}/mcp  (nginx -> ${instances.map(instance => instance.address).join(', ')}; redis ${redis.url})\n`)

const stop = async () => {
  if (isStopping) return
  isStopping = true
  await nginx.stop()
  await Promise.all(instances.map(instance => instance.stop()))
  await redis.stop()
  process.exit(0)
}
process.on('SIGINT', () => void stop())
process.on('SIGTERM', () => void stop())
