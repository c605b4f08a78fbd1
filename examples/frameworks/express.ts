// The everything server behind Express 5, with express.json() mounted for the whole app, MCP
// included (the common setup that used to answer every MCP request 400 -32700).
//   npx tsx examples/frameworks/express.ts 3000     serves http://127.0.0.1:3000/mcp (port 0: any free one)
// In an application the imports are `rxmcp/web` (webHandler) and `rxmcp/transports/streamable-http`
// (nodeHandler). The Host check keeps its default, loopback names only, which fits a server bound to
// 127.0.0.1; served under another name, list it in `allowedHosts`.
import express, { type ErrorRequestHandler } from 'express'
import { STREAMABLE_HTTP_DEFAULTS, webHandler } from '../../entries/web.ts'
import { nodeHandler } from '../../transports/streamable-http.ts'
import { createEverythingServer } from '../everything/everything.ts'

const port = Number(process.argv[2] ?? 3000)

const server = createEverythingServer()
const mcp = webHandler()
await server.listen(mcp)
const mcpOnNode = nodeHandler(mcp)

const app = express()
// MCP messages can be large (a tool's arguments, a sampling answer): the parser's limit is rxmcp's,
// not express.json()'s 100 kB default.
app.use(express.json({ limit: STREAMABLE_HTTP_DEFAULTS.maxBodyBytes }))
// The body express.json() parsed is taken from req.body; Express's `next` is not mistaken for one.
app.all('/mcp', mcpOnNode)
// express.json() refuses unreadable JSON before the route runs: its text goes to MCP, which answers
// it as it answers everywhere (400, -32700), not with Express's HTML error page. Other refusals
// (413 over the limit) stay Express's. Mounted without a path: app.use('/mcp', ...) would cut
// /mcp off req.url, and MCP would not know the request as its own.
const unreadableToMcp: ErrorRequestHandler = (error, req, res, next) => {
  if (req.path === '/mcp' && error?.type === 'entity.parse.failed' && typeof error.body === 'string') mcpOnNode(req, res, error.body)
  else next(error)
}
app.use(unreadableToMcp)

const http = app.listen(port, '127.0.0.1', error => {
  if (error !== undefined) { process.stderr.write(`express: ${error.message}\n`); process.exit(1) }
  const { port: bound } = http.address() as { port: number }
  process.stderr.write(`rxmcp everything server on Express: http://127.0.0.1:${bound}/mcp\n`)
})

// Sessions and their SSE streams end first, so clients see the streams close, not a reset.
const stop = () => { void server.close().finally(() => process.exit(0)) }
process.once('SIGINT', stop)
process.once('SIGTERM', stop)
