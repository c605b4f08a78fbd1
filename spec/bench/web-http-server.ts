// The everything server through the web handler (rxmcp/web) on Node, for `npm run bench`'s `web`
// rows: node:http requests turned into web Requests by @hono/node-server (what a Hono app on Node
// runs), against the node:http listener, which serves node's objects directly.
//   npx tsx spec/bench/web-http-server.ts PORT      prints http://127.0.0.1:PORT/mcp on stderr
import { createServer as createHttpServer } from 'node:http'
import { getRequestListener } from '@hono/node-server'
import { createEverythingServer } from '../../examples/everything/everything.ts'
import { webHandler } from '../../transports/http-handler.ts'

const server = createEverythingServer()
const mcp = webHandler()
await server.listen(mcp)
const http = createHttpServer({ noDelay: true, keepAliveTimeout: 30_000 }, getRequestListener(request => mcp.fetch(request)))
http.listen(Number(process.argv[2] ?? 0), '127.0.0.1', () => {
  const address = http.address() as { port: number }
  process.stderr.write(`rxmcp web handler at http://127.0.0.1:${address.port}/mcp\n`)
})
// Exits on SIGINT, so `--cpu-prof` (profile-http.ts) writes its profile.
process.once('SIGINT', () => process.exit(0))
