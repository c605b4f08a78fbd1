// The counter MCP App server.
//   npx tsx examples/apps/server.ts              stdio
//   npx tsx examples/apps/server.ts --http 3000  Streamable HTTP at http://127.0.0.1:3000/mcp
// Then open it in a host that renders MCP Apps (`rxmcp inspect --ui -- npx tsx examples/apps/server.ts`).
import { stdio } from '../../transports/stdio.ts'
import { streamableHttp } from '../../transports/streamable-http.ts'
import { createCounterServer } from './counter.ts'

const index = process.argv.indexOf('--http')
if (index < 0) {
  const session = await createCounterServer().listen(stdio())
  await session.closed
} else {
  const server = createCounterServer()
  const http = streamableHttp({ port: Number(process.argv[index + 1] ?? 3000) })
  await server.listen(http)
  process.stderr.write(`rxmcp counter app: Streamable HTTP at ${http.url}\n`)
  const stop = () => { void server.close().then(() => process.exit(0)) }
  process.once('SIGINT', stop)
  process.once('SIGTERM', stop)
}
