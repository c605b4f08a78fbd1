// The everything server on Deno: rxmcp's web handler (rxmcp/web) under Deno.serve.
//   deno run -A examples/deno/server.ts [port]     Streamable HTTP (both eras) and legacy SSE on 127.0.0.1 (port 0: any free one)
// Deno runs rxmcp's TypeScript sources as they are and takes rxjs and the rest from the project's
// node_modules (deno.jsonc beside this file: "nodeModulesDir": "manual"), so it fetches nothing.
import { webHandler } from '../../entries/web.ts'
import { createEverythingServer } from '../everything/everything.ts'

const port = Number(Deno.args[0] ?? 3000)
const server = createEverythingServer()
const mcp = webHandler()
await server.listen(mcp)
// Deno.serve hands the handler its ServeHandlerInfo, which fits WebRequestInit: `remoteAddr` is the
// client's address, for the budgets kept per address (rateLimit, failedAuthLimit).
const http = Deno.serve({ hostname: '127.0.0.1', port, onListen: () => {} }, mcp.fetch)
const url = `http://127.0.0.1:${http.addr.port}`
// One line, on stderr: tests wait for "listening at".
console.error(`rxmcp everything server on Deno: listening at ${url}/mcp (legacy SSE at ${url}/sse)`)

// SIGINT or SIGTERM: the sessions end (their SSE streams close), then the listener, then the process.
let isStopping = false
const stop = () => {
  if (isStopping) return
  isStopping = true
  void server.close().then(() => http.shutdown()).then(() => Deno.exit(0))
}
Deno.addSignalListener('SIGINT', stop)
Deno.addSignalListener('SIGTERM', stop)
