// The minimal rxmcp server over Streamable HTTP (one echo tool), for `npm run bench`'s memory row:
// what an idle session costs with the least a server registers (issue 8 measured memory so).
//   npx tsx spec/bench/rxmcp-http-echo-server.ts PORT      prints http://127.0.0.1:PORT/mcp on stderr
import { createServer } from '../../actors/server.ts'
import { streamableHttp } from '../../transports/streamable-http.ts'

const server = createServer({ name: 'rxmcp-http-bench', version: '1' })
server.tool('echo', { inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] } }, args => ({ content: [{ type: 'text', text: args.text as string }] }))
const http = streamableHttp({ port: Number(process.argv[2] ?? 0) })
await server.listen(http)
process.stderr.write(`rxmcp minimal server at ${http.url}\n`)
