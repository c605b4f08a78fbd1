// The everything server.
//   npx tsx examples/everything/server.ts              stdio (stdout carries only protocol)
//   npx tsx examples/everything/server.ts --http 3000  Streamable HTTP at /mcp, legacy HTTP+SSE at /sse, on 127.0.0.1
import { stdio } from '../../transports/stdio.ts'
import { streamableHttp } from '../../transports/streamable-http.ts'
import { createEverythingServer } from './everything.ts'

const httpFlag = process.argv.indexOf('--http')
if (httpFlag >= 0) {
  const port = Number(process.argv[httpFlag + 1] ?? 3000)
  const http = streamableHttp({ port })
  const server = createEverythingServer()
  await server.listen(http)
  process.stderr.write(`rxmcp everything server: Streamable HTTP at ${http.url}, legacy SSE at ${http.url!.replace(/\/mcp$/, '/sse')}\n`)
  const stop = () => { void server.close().then(() => process.exit(0)) }
  process.once('SIGINT', stop)
  process.once('SIGTERM', stop)
} else {
  const session = await createEverythingServer().listen(stdio())
  await session.closed
}
