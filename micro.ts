// In-process per-call CPU of a legacy tools/call (sync echo handler) through the server's session and connection.
import { createServer } from './actors/server.ts'
import { FakeTransport } from './spec/helpers/fake-transport.ts'
const server = createServer({ name: 'b', version: '1' })
server.tool('echo', { inputSchema: { type: 'object', properties: { text: { type: 'string' } } } }, ({ text }: { text?: string }) => ({ content: [{ type: 'text' as const, text: text ?? '' }] }))
const transport = new FakeTransport()
await server.listen(transport as never)
transport.receive({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '1' } } })
await transport.settle()
transport.receive({ jsonrpc: '2.0', method: 'notifications/initialized' })
let id = 1
async function round(n: number): Promise<number> {
  transport.sent.length = 0
  const start = process.cpuUsage()
  for (let i = 0; i < n; i++) {
    transport.receive({ jsonrpc: '2.0', id: id++, method: 'tools/call', params: { name: 'echo', arguments: { text: 'hi' } } })
    if (i % 64 === 63) await new Promise(resolve => setImmediate(resolve))
  }
  while (transport.sent.length < n) await new Promise(resolve => setImmediate(resolve))
  const used = process.cpuUsage(start)
  return (used.user + used.system) / n
}
for (let i = 0; i < 3; i++) await round(20_000)
const results: number[] = []
for (let i = 0; i < 7; i++) results.push(await round(50_000))
results.sort((a, b) => a - b)
console.log(process.argv[2] ?? '', 'µs/call median', results[3]!.toFixed(3), 'min', results[0]!.toFixed(3))
process.exit(0)
