// The floor of the gateway benchmark with an HTTP server behind: node:http in front and behind, no
// MCP library. Each request is passed to TARGET as it came (method, body, the MCP headers) on a
// keep-alive agent, and the answer streamed back as it comes (status, content type, session id):
// no parsing, no routing, no policy. Through it a call costs what the sockets and HTTP of one more
// hop cost on this machine, and nothing of MCP: what a gateway's calls/s could be at best here.
//   npx tsx spec/bench/http-floor-proxy.ts TARGET_URL      prints http://127.0.0.1:PORT/mcp on stderr
import { Agent, createServer, request } from 'node:http'

const target = new URL(process.argv[2]!)
const agent = new Agent({ keepAlive: true })
/** The request headers passed on (the body's length is set anew). */
const ASKED = ['content-type', 'accept', 'mcp-session-id', 'mcp-protocol-version', 'mcp-method', 'mcp-name', 'last-event-id']
/** The answer headers passed back. */
const ANSWERED = ['content-type', 'mcp-session-id']

const http = createServer({ noDelay: true, keepAliveTimeout: 30_000 }, (req, res) => {
  const chunks: Buffer[] = []
  req.on('data', chunk => chunks.push(chunk))
  req.on('end', () => {
    const body = Buffer.concat(chunks)
    const headers: Record<string, string | number> = { 'content-length': body.length }
    for (const name of ASKED) { const value = req.headers[name]; if (typeof value === 'string') headers[name] = value }
    const onward = request({ hostname: target.hostname, port: target.port, path: target.pathname, method: req.method, agent, headers }, answer => {
      const back: Record<string, string> = {}
      for (const name of ANSWERED) { const value = answer.headers[name]; if (typeof value === 'string') back[name] = value }
      res.writeHead(answer.statusCode ?? 502, back)
      answer.pipe(res)
    })
    onward.on('error', () => { if (!res.headersSent) res.writeHead(502); res.end() })
    // The caller went away before the whole answer: so does the request behind.
    res.on('close', () => { if (!res.writableFinished) onward.destroy() })
    onward.end(body)
  })
})
http.listen(0, '127.0.0.1', () => {
  const address = http.address() as { port: number }
  console.error(`floor proxy on http://127.0.0.1:${address.port}/mcp`)
})
