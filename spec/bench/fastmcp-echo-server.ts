// fastmcp (the TypeScript framework, npm `fastmcp`) answering the bench's echo tool, as a peer in
// `npm run bench`: over stdio, or over its Streamable HTTP ("httpStream") on 127.0.0.1.
//   npx tsx spec/bench/fastmcp-echo-server.ts stdio
//   npx tsx spec/bench/fastmcp-echo-server.ts http      prints http://127.0.0.1:PORT/mcp on stderr
import { createServer } from 'node:net'
import { FastMCP } from 'fastmcp'
import { z } from 'zod'

const mode = process.argv[2] ?? 'stdio'
const server = new FastMCP({ name: 'fastmcp-echo', version: '1.0.0' })
server.addTool({
  name: 'echo',
  description: 'Returns the text it is given',
  parameters: z.object({ text: z.string() }),
  execute: async ({ text }) => text,
})

if (mode === 'http') {
  // fastmcp takes a port, not 0: one the system gives is taken and released first.
  const port = await new Promise<number>(resolve => {
    const probe = createServer().listen(0, '127.0.0.1', () => {
      const { port: free } = probe.address() as { port: number }
      probe.close(() => resolve(free))
    })
  })
  await server.start({ transportType: 'httpStream', httpStream: { port, host: '127.0.0.1' } })
  process.stderr.write(`fastmcp at http://127.0.0.1:${port}/mcp\n`)
} else {
  await server.start({ transportType: 'stdio' })
}
