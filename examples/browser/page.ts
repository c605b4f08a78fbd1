// The page of the browser example: bundled for the browser by server.ts (esbuild), it imports only
// rxmcp's browser entry. It talks to the server that served it: Streamable HTTP and WebSocket at /mcp.
import { lastValueFrom, toArray } from 'rxjs'
import { connect, createMemoryPair, createServer, streamableHttpClient, websocketClient } from '../../browser.ts'

const element = (id: string): HTMLElement => document.getElementById(id)!

function append(listId: string, text: string): void {
  const item = document.createElement('li')
  item.textContent = text
  element(listId).append(item)
}

async function overHttp(): Promise<void> {
  const client = await connect(streamableHttpClient(new URL('/mcp', location.href)), { name: 'rxmcp-browser-example', version: '1.0.0' })
  element('server').textContent = `${client.serverInfo.name} ${client.serverInfo.version} (${client.protocolVersion})`
  // Every tool across pages, as one Observable.
  for (const tool of await lastValueFrom(client.tools().pipe(toArray()))) append('tools', tool.name)
  // A call as events: a progress report per step, then the result.
  await new Promise<void>((resolve, reject) => {
    client.request('tools/call', { name: 'long_running', arguments: { steps: 3, ms: 50 } }).subscribe({
      next: event => {
        if (event.type === 'progress') append('progress', `${event.progress}/${event.total}: ${event.message}`)
        else element('result').textContent = event.result.content.map(part => part.type === 'text' ? part.text : `[${part.type}]`).join('\n')
      },
      error: reject,
      complete: resolve,
    })
  })
  await client.close()
}

async function overWebSocket(): Promise<void> {
  const url = new URL('/mcp', location.href)
  url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:'
  // The browser's own WebSocket, msgpack in binary frames.
  const client = await connect(websocketClient(url, { encoding: 'msgpack' }), { name: 'rxmcp-browser-example', version: '1.0.0' })
  const result = await client.callTool('echo', { text: 'hello over a WebSocket' })
  element('ws-result').textContent = result.content.map(part => part.type === 'text' ? part.text : `[${part.type}]`).join('\n')
  await client.close()
}

async function inPage(): Promise<void> {
  // A server in the page itself, over a memory pair: its input schema is checked here too.
  const server = createServer({ name: 'in-page', version: '1.0.0' })
  server.tool('shout', { description: 'Upper-cases text', inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] } },
    ({ text }) => ({ content: [{ type: 'text', text: String(text).toUpperCase() }] }))
  const [clientSide, serverSide] = createMemoryPair()
  await server.listen(serverSide)
  const client = await connect(clientSide, { name: 'rxmcp-browser-example', version: '1.0.0' })
  const result = await client.callTool('shout', { text: 'hello from the page' })
  // Arguments that miss the schema: a tool error result (isError), as MCP says.
  const refused = await client.callTool('shout', {})
  const text = (outcome: typeof result) => outcome.content.map(part => part.type === 'text' ? part.text : `[${part.type}]`).join('\n')
  element('in-page-result').textContent = `${text(result)}\n${refused.isError === true ? 'refused' : 'accepted'}: ${text(refused)}`
  await client.close()
  await server.close()
}

const status = element('status')
try {
  await overHttp()
  await overWebSocket()
  await inPage()
  status.textContent = 'done'
  status.dataset.state = 'done'
} catch (error) {
  status.textContent = `failed: ${error instanceof Error ? `${error.name}: ${error.message}` : String(error)}`
  status.dataset.state = 'error'
}
