/**
 * The official SDK v2 (`@modelcontextprotocol/server` 2.4) peer of the modern-era benchmark: an
 * McpServer with the echo tool, served the way the SDK serves 2026-07-28 (a server made by the
 * factory per request or connection, the era decided per message).
 *
 *   node --import tsx spec/bench/sdk-v2-echo-server.ts http [port]   createMcpHandler on node:http,
 *                                                                    127.0.0.1; prints its URL
 *   node --import tsx spec/bench/sdk-v2-echo-server.ts stdio         serveStdio
 *
 * node:http is mounted the way the SDK's Node adapter (`@modelcontextprotocol/node`, not installed
 * here) does it: the body read as text into a web Request, the Response's headers written, its body
 * streamed out (so SSE answers flow as they come).
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { McpServer, createMcpHandler } from '@modelcontextprotocol/server'
import { serveStdio } from '@modelcontextprotocol/server/stdio'
import { z } from 'zod'

function echoServer(): McpServer {
  const server = new McpServer({ name: 'sdk-v2-echo', version: '2.4.0' })
  server.registerTool('echo', { description: 'Returns the text it is given', inputSchema: z.object({ text: z.string() }) },
    async ({ text }) => ({ content: [{ type: 'text', text }] }))
  return server
}

/** A web Request from a node:http request, its body read whole as text (MCP bodies are JSON). */
async function webRequest(req: IncomingMessage): Promise<Request> {
  const headers = new Headers()
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined) continue
    if (Array.isArray(value)) for (const one of value) headers.append(name, one)
    else headers.set(name, value)
  }
  let body: string | undefined
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    body = ''
    req.setEncoding('utf8')
    for await (const chunk of req) body += chunk as string
  }
  return new Request(`http://${req.headers.host ?? '127.0.0.1'}${req.url ?? '/'}`, { method: req.method, headers, body: body === '' ? undefined : body })
}

/** Writes a web Response to node:http, its body streamed chunk by chunk. */
async function writeResponse(response: Response, res: ServerResponse): Promise<void> {
  const headers: Record<string, string> = {}
  response.headers.forEach((value, name) => { headers[name] = value })
  res.writeHead(response.status, headers)
  if (response.body === null) { res.end(); return }
  const reader = response.body.getReader()
  // A client that goes away cancels the body (the exchange ends with it).
  res.on('close', () => { void reader.cancel().catch(() => {}) })
  for (;;) {
    const { done, value } = await reader.read().catch(() => ({ done: true as const, value: undefined }))
    if (done) break
    res.write(value)
  }
  res.end()
}

if (process.argv[2] === 'stdio') {
  serveStdio(() => echoServer())
} else {
  const handler = createMcpHandler(() => echoServer(), { keepAliveMs: 0 })
  const http = createServer((req, res) => {
    webRequest(req).then(request => handler.fetch(request)).then(response => writeResponse(response, res),
      () => { if (!res.headersSent) res.writeHead(500).end() })
  })
  http.listen(Number(process.argv[3] ?? 0), '127.0.0.1', () => {
    process.stdout.write(`http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp\n`)
  })
}
