// The official SDK's McpServer with the same echo tool as the rxmcp everything server, over stdio.
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js'
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js'
import { z } from 'zod'

const server = new McpServer({ name: 'official-echo', version: '1.0.0' })
server.registerTool('echo', { description: 'Returns the text it is given', inputSchema: { text: z.string() } },
  async ({ text }) => ({ content: [{ type: 'text', text }] }))
await server.connect(new StdioServerTransport())
