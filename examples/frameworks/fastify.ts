// The everything server behind Fastify 5, with Fastify's own JSON parser reading the body.
//   npx tsx examples/frameworks/fastify.ts 3000     serves http://127.0.0.1:3000/mcp (port 0: any free one)
// In an application the imports are `rxmcp/web` (webHandler) and `rxmcp/transports/streamable-http`
// (nodeHandler). The Host check keeps its default, loopback names only, which fits a server bound to
// 127.0.0.1; served under another name, list it in `allowedHosts`.
import Fastify from 'fastify'
import { STREAMABLE_HTTP_DEFAULTS, webHandler } from '../../entries/web.ts'
import { nodeHandler } from '../../transports/streamable-http.ts'
import { createEverythingServer } from '../everything/everything.ts'

const port = Number(process.argv[2] ?? 3000)

const server = createEverythingServer()
const mcp = webHandler()
await server.listen(mcp)
const mcpOnNode = nodeHandler(mcp)

// Fastify's body limit (1 MiB by default) is set to rxmcp's, so the larger of the two does not sit unused.
const app = Fastify({ bodyLimit: STREAMABLE_HTTP_DEFAULTS.maxBodyBytes })
app.all('/mcp', (request, reply) => {
  // MCP writes the answer on node's response itself, SSE streams included: Fastify must not send one.
  reply.hijack()
  // The parsed body (undefined for GET and DELETE, which have none) goes along; node's objects do the rest.
  mcpOnNode(request.raw, reply.raw, request.body)
})

try {
  const url = await app.listen({ port, host: '127.0.0.1' })
  process.stderr.write(`rxmcp everything server on Fastify: ${url}/mcp\n`)
} catch (error) {
  process.stderr.write(`fastify: ${(error as Error).message}\n`)
  process.exit(1)
}

// Sessions and their SSE streams end first, so clients see the streams close, not a reset.
const stop = () => { void server.close().finally(() => process.exit(0)) }
process.once('SIGINT', stop)
process.once('SIGTERM', stop)
