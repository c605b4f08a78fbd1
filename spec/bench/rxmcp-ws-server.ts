// rxmcp over WebSocket for the benchmark: echo, and `big`, a 1 MiB structured result. Prints its URL.
import { createServer } from '../../actors/server.ts'
import { websocket } from '../../transports/websocket.ts'

const rows = Array.from({ length: 8_000 }, (_, i) => ({ id: i, name: `row ${i}`, score: i * 1.5, tags: ['a', 'b', 'c'], isActive: i % 2 === 0, nested: { x: i, y: -i } }))
const server = createServer({ name: 'rxmcp-ws-bench', version: '1' })
server.tool('echo', { inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] } }, args => ({ content: [{ type: 'text', text: args.text as string }] }))
server.tool('big', {}, () => ({ content: [], structuredContent: { rows } }))
const ws = websocket({ port: Number(process.argv[2] ?? 0), maxFrameBytes: 64 << 20 })
await server.listen(ws)
process.stdout.write(`${ws.url}\n`)
