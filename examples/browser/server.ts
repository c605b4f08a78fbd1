// The browser example: a page that uses rxmcp's client, and the everything server it talks to.
//   npx tsx examples/browser/server.ts [port]     then open the printed URL
// One origin serves both: the page at /, the MCP endpoint at /mcp (Streamable HTTP, and WebSocket
// upgrades on the same path), so the browser needs no CORS.
import { readFile } from 'node:fs/promises'
import { createServer as createNodeServer } from 'node:http'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { build } from 'esbuild'
import { streamableHttp } from '../../transports/streamable-http.ts'
import { websocket } from '../../transports/websocket.ts'
import { closeServer, listenOn } from '../../transports/listen.ts'
import { createEverythingServer } from '../everything/everything.ts'

/** The example, running: where to open it, and how to stop it. */
export interface BrowserExample {
  /** `http://127.0.0.1:<port>/` */
  readonly url: string
  close(): Promise<void>
}

/**
 * Bundles page.ts for the browser with esbuild and serves it, with the everything server at /mcp,
 * on 127.0.0.1 (port 0: any free one).
 */
export async function startBrowserExample(port = 0): Promise<BrowserExample> {
  const bundle = await build({
    entryPoints: [fileURLToPath(new URL('page.ts', import.meta.url))],
    bundle: true, platform: 'browser', format: 'esm', target: 'es2022', write: false, logLevel: 'silent', sourcemap: 'inline',
  })
  const script = bundle.outputFiles[0]!.text
  const page = await readFile(new URL('index.html', import.meta.url), 'utf8')

  const server = createEverythingServer()
  // Not started on a port of its own: this node:http server hands it its requests and upgrades.
  const http = streamableHttp()
  const ws = websocket()
  await server.listen({ connections: http.connections, requests: http.requests, close: () => http.close() })
  await server.listen({ connections: ws.connections, close: () => ws.close() })
  const node = createNodeServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0]
    if (req.method === 'GET' && path === '/') return send(res, 'text/html; charset=utf-8', page)
    if (req.method === 'GET' && path === '/page.js') return send(res, 'text/javascript; charset=utf-8', script)
    http.nodeHandler(req, res)
  })
  ws.attach(node)
  const bound = await listenOn(node, port, '127.0.0.1')
  return {
    url: `http://127.0.0.1:${bound}/`,
    close: async () => {
      await server.close()
      await closeServer(node)
    },
  }
}

function send(res: import('node:http').ServerResponse, contentType: string, body: string): void {
  res.writeHead(200, { 'content-type': contentType, 'cache-control': 'no-store' })
  res.end(body)
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const example = await startBrowserExample(Number(process.argv[2] ?? 3000))
  process.stderr.write(`rxmcp browser example: open ${example.url}\n`)
  const stop = () => { void example.close().then(() => process.exit(0)) }
  process.once('SIGINT', stop)
  process.once('SIGTERM', stop)
}
