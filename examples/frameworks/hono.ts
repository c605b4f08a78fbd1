// The everything server behind Hono on Node (@hono/node-server): the route hands Hono's web Request to
// rxmcp's web handler and returns its Response, SSE streams included.
//   npx tsx examples/frameworks/hono.ts 3000     serves http://127.0.0.1:3000/mcp (port 0: any free one)
// In an application the import is `rxmcp/web`. The Host check keeps its default, loopback names
// only, which fits a server bound to 127.0.0.1; served under another name, list it in `allowedHosts`.
import { Hono } from 'hono'
import { serve } from '@hono/node-server'
import { getConnInfo } from '@hono/node-server/conninfo'
import { webHandler } from '../../entries/web.ts'
import { createEverythingServer } from '../everything/everything.ts'

const port = Number(process.argv[2] ?? 3000)

const server = createEverythingServer()
const mcp = webHandler()
await server.listen(mcp)

const app = new Hono()
// The body is left unread, so rxmcp reads it (under its own maxBodyBytes). The client's address is
// passed on: a web Request does not carry one, and the per-client limits (sessions, requests) need it.
app.all('/mcp', c => mcp.fetch(c.req.raw, { remoteAddress: getConnInfo(c).remote.address }))

const http = serve({ fetch: app.fetch, port, hostname: '127.0.0.1' }, info => {
  process.stderr.write(`rxmcp everything server on Hono: http://127.0.0.1:${info.port}/mcp\n`)
})
http.once('error', error => { process.stderr.write(`hono: ${error.message}\n`); process.exit(1) })

// Sessions and their SSE streams end first, so clients see the streams close, not a reset.
const stop = () => { void server.close().finally(() => process.exit(0)) }
process.once('SIGINT', stop)
process.once('SIGTERM', stop)
