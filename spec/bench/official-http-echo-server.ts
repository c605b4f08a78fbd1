// The official SDK's McpServer with an echo tool over its Streamable HTTP transport (one per
// session), on 127.0.0.1: prints its URL on stdout. The peer of the HTTP benchmark.
import { createServer as createHttpServer } from 'node:http'
import { randomUUID } from 'node:crypto'
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js'
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js'
import { z } from 'zod'

const transports = new Map<string, StreamableHTTPServerTransport>()
const http = createHttpServer(async (req, res) => {
  const sessionId = req.headers['mcp-session-id'] as string | undefined
  let transport = sessionId === undefined ? undefined : transports.get(sessionId)
  if (transport === undefined) {
    if (sessionId !== undefined) { res.statusCode = 404; res.end(); return }
    const server = new McpServer({ name: 'official-http-echo', version: '1.0.0' })
    server.registerTool('echo', { description: 'Returns the text it is given', inputSchema: { text: z.string() } }, async ({ text }) => ({ content: [{ type: 'text', text }] }))
    const created = new StreamableHTTPServerTransport({ sessionIdGenerator: () => randomUUID(), onsessioninitialized: id => { transports.set(id, created) } })
    transport = created
    await server.connect(created)
  }
  await transport.handleRequest(req, res)
})
http.listen(Number(process.argv[2] ?? 0), '127.0.0.1', () => {
  const address = http.address()
  process.stdout.write(`http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}/mcp\n`)
})
