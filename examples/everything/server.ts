// The everything server.
//   npx tsx examples/everything/server.ts              stdio (stdout carries only protocol)
//   npx tsx examples/everything/server.ts --http 3000  Streamable HTTP and WebSocket at /mcp, legacy HTTP+SSE at /sse, on 127.0.0.1
//   npx tsx examples/everything/server.ts --ws 3001    WebSocket alone at ws://127.0.0.1:3001/mcp
import { stdio } from '../../transports/stdio.ts'
import { streamableHttp } from '../../transports/streamable-http.ts'
import { websocket } from '../../transports/websocket.ts'
import { createEverythingServer } from './everything.ts'

const flag = (name: string) => {
  const index = process.argv.indexOf(name)
  return index < 0 ? undefined : Number(process.argv[index + 1] ?? 3000)
}
const httpPort = flag('--http')
const wsPort = flag('--ws')

if (httpPort === undefined && wsPort === undefined) {
  const session = await createEverythingServer().listen(stdio())
  await session.closed
} else {
  const server = createEverythingServer()
  const ws = websocket({ port: wsPort })
  if (httpPort !== undefined) {
    const http = streamableHttp({ port: httpPort })
    await server.listen(http)
    // WebSocket upgrades on the same port and path as Streamable HTTP.
    ws.attach(http.httpServer!)
    await server.listen({ connections: ws.connections, close: () => ws.close() })
    process.stderr.write(`rxmcp everything server: Streamable HTTP at ${http.url}, WebSocket at ${http.url!.replace(/^http/, 'ws')}, legacy SSE at ${http.url!.replace(/\/mcp$/, '/sse')}\n`)
  }
  if (wsPort !== undefined) {
    await server.listen(ws)
    process.stderr.write(`rxmcp everything server: WebSocket at ${ws.url}\n`)
  }
  const stop = () => { void server.close().then(() => process.exit(0)) }
  process.once('SIGINT', stop)
  process.once('SIGTERM', stop)
}
