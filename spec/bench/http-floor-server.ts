// The floor of the Streamable HTTP benchmark: node:http and JSON, no MCP library. It answers what
// the bench's drivers send with the least work a correct server still does: the body read whole,
// parsed, a session id minted at initialize (random, 128 bits) and checked on every later POST
// (404 for one it does not know), a notification answered 202, a request answered with one JSON
// body (the "JSON floor": no SSE). Modern-era POSTs (no session, the 2026-07-28 header) are
// answered the same way. It shows what sockets, HTTP parsing and JSON cost on this machine.
//   npx tsx spec/bench/http-floor-server.ts PORT      prints http://127.0.0.1:PORT/mcp on stderr
import { createServer } from 'node:http'
import { randomBytes } from 'node:crypto'

/** The sessions initialize opened. */
const sessions = new Set<string>()
const JSON_HEADERS = { 'content-type': 'application/json' }

const http = createServer({ noDelay: true, keepAliveTimeout: 30_000 }, (req, res) => {
  if (req.method !== 'POST' || req.url !== '/mcp') { res.writeHead(404).end(); return }
  const chunks: Buffer[] = []
  req.on('data', chunk => chunks.push(chunk))
  req.on('end', () => {
    const message = JSON.parse(Buffer.concat(chunks).toString('utf8'))
    const isModern = req.headers['mcp-protocol-version'] === '2026-07-28'
    if (message.method === 'initialize') {
      const id = randomBytes(16).toString('hex')
      sessions.add(id)
      const result = { protocolVersion: message.params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: 'floor', version: '1' } }
      res.writeHead(200, { ...JSON_HEADERS, 'mcp-session-id': id }).end(JSON.stringify({ jsonrpc: '2.0', id: message.id, result }))
      return
    }
    const session = req.headers['mcp-session-id']
    if (!isModern && (typeof session !== 'string' || !sessions.has(session))) { res.writeHead(404).end(); return }
    if (message.id === undefined) { res.writeHead(202).end(); return }
    const result = message.method === 'tools/call'
      ? { content: [{ type: 'text', text: message.params.arguments.text }], ...(isModern ? { resultType: 'complete' } : {}) }
      : {}
    res.writeHead(200, JSON_HEADERS).end(JSON.stringify({ jsonrpc: '2.0', id: message.id, result }))
  })
})
http.listen(Number(process.argv[2] ?? 0), '127.0.0.1', () => {
  const address = http.address() as { port: number }
  process.stderr.write(`http floor at http://127.0.0.1:${address.port}/mcp\n`)
})
// Exits (rather than dying of the signal) so a profiled run writes its profile (profile-http.ts floor).
process.on('SIGINT', () => process.exit(0))
