// The everything server with OpenTelemetry: traces and metrics by the MCP semantic conventions,
// exported as the standard OTEL_* environment variables say (the Node SDK reads them; see bin/otel.ts).
//
//   OTEL_SERVICE_NAME=everything OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:4318 \
//   OTEL_EXPORTER_OTLP_PROTOCOL=http/json npx tsx examples/telemetry/server.ts 3000
//
// Streamable HTTP (and WebSocket) at http://127.0.0.1:PORT/mcp, legacy SSE at /sse; with --stdio
// instead of a port, over stdio (stdout carries only protocol). A request carrying `traceparent` in
// its `_meta` continues the caller's trace. SIGTERM or SIGINT closes the server, then exports the
// last spans and metrics before the process exits.
import { stdio } from '../../transports/stdio.ts'
import { streamableHttp } from '../../transports/streamable-http.ts'
import { websocket } from '../../transports/websocket.ts'
import { startOtel } from '../../bin/otel.ts'
import { createEverythingServer } from '../everything/everything.ts'

const arg = process.argv[2]
const isStdio = arg === '--stdio'
const port = Number(arg ?? 3000)
if (!isStdio && (!Number.isInteger(port) || port < 0 || port > 65535)) {
  process.stderr.write('usage: examples/telemetry/server.ts PORT | --stdio\n')
  process.exit(2)
}

// Before the server: its telemetry takes the global providers the SDK registers.
const sdk = await startOtel(isStdio)
const server = createEverythingServer({ telemetry: true })
let stopping: Promise<void> | undefined
const stop = () => stopping ??= server.close().catch(() => {}).then(() => sdk.shutdown()).then(() => process.exit(0))
process.once('SIGINT', stop)
process.once('SIGTERM', stop)

if (isStdio) {
  const session = await server.listen(stdio())
  await session.closed
  await stop()
} else {
  const http = streamableHttp({ port })
  await server.listen(http)
  const ws = websocket()
  ws.attach(http.httpServer!)
  await server.listen({ connections: ws.connections, close: () => ws.close() })
  process.stderr.write(`rxmcp telemetry example: Streamable HTTP at ${http.url}, WebSocket at ${http.url!.replace(/^http/, 'ws')}, legacy SSE at ${http.url!.replace(/\/mcp$/, '/sse')}\n`)
}
