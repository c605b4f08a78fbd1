// The floor of the WebSocket benchmark: a raw `ws` server that answers tools/call echo with the
// least possible work (parse, build the result, stringify). Prints its URL on stdout.
import { WebSocketServer } from 'ws'

const wss = new WebSocketServer({ host: '127.0.0.1', port: Number(process.argv[2] ?? 0), perMessageDeflate: false, handleProtocols: () => 'mcp' })
wss.on('connection', socket => {
  socket.on('message', data => {
    const message = JSON.parse(data.toString())
    if (message.id === undefined) return
    const result = message.method === 'initialize'
      ? { protocolVersion: '2025-11-25', capabilities: { tools: {} }, serverInfo: { name: 'floor', version: '1' } }
      : { content: [{ type: 'text', text: message.params.arguments.text }] }
    socket.send(JSON.stringify({ jsonrpc: '2.0', id: message.id, result }))
  })
})
wss.on('listening', () => {
  const address = wss.address()
  process.stdout.write(`ws://127.0.0.1:${typeof address === 'object' && address !== null ? address.port : 0}/mcp\n`)
})
