/**
 * The modern-era (MCP 2026-07-28) part of `npm run bench`: the echo tool called statelessly, rxmcp's
 * everything server against the official SDK v2 server (sdk-v2-echo-server.ts), each in a child
 * process, driven by the same raw code for both:
 *
 * - Streamable HTTP: one keep-alive POST per call with the 2026-07-28 headers (MCP-Protocol-Version,
 *   Mcp-Method, Mcp-Name) and the `_meta` every modern request carries; no initialize, no session.
 *   The answer is read as JSON or as an SSE stream, whichever the server chose.
 * - stdio: raw-driver.ts writing the same requests as JSON lines, after one `server/discover`
 *   (what a modern client sends first, and what makes the SDK's serveStdio pick the modern era).
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { request as httpRequest, Agent } from 'node:http'
import { fileURLToPath } from 'node:url'
import { within } from './procs.ts'
import { serverArgs } from './built.ts'
import { RawDriver, type RawResponse } from './raw-driver.ts'

const root = fileURLToPath(new URL('../..', import.meta.url))
export const MODERN_VERSION = '2026-07-28'

/** The sides of the modern comparison. */
export type ModernSide = 'rxmcp' | 'sdk-v2'

/** Node arguments of each side's server child (node runs them directly, so the pid is the server's). */
export const MODERN_SERVERS: Record<'http' | 'stdio', Record<ModernSide, readonly string[]>> = {
  http: {
    rxmcp: ['--import', 'tsx', 'examples/everything/server.ts', '--http', '0'],
    'sdk-v2': ['--import', 'tsx', 'spec/bench/sdk-v2-echo-server.ts', 'http', '0'],
  },
  stdio: {
    rxmcp: ['--import', 'tsx', 'examples/everything/server.ts'],
    'sdk-v2': ['--import', 'tsx', 'spec/bench/sdk-v2-echo-server.ts', 'stdio'],
  },
}

/** The `_meta` of every modern request: the revision, the client's capabilities (none needed) and info. */
const META_JSON = JSON.stringify({
  'io.modelcontextprotocol/protocolVersion': MODERN_VERSION,
  'io.modelcontextprotocol/clientCapabilities': {},
  'io.modelcontextprotocol/clientInfo': { name: 'rxmcp-bench', version: '1' },
})

/** The params of a modern echo call, as JSON text (built once; only the id changes per call). */
export function modernEchoParams(text: string): string {
  return `{"name":"echo","arguments":${JSON.stringify({ text })},"_meta":${META_JSON}}`
}

// ---------------------------------------------------------------------------------------------
// Streamable HTTP
// ---------------------------------------------------------------------------------------------

/** Starts a side's HTTP server child and reads its endpoint URL from its output. */
export async function startModernHttp(side: ModernSide, cwd = root): Promise<{ child: ChildProcess; url: URL }> {
  const child = spawn(process.execPath, serverArgs(MODERN_SERVERS.http[side], cwd), { cwd, stdio: ['ignore', 'pipe', 'pipe'] })
  const url = await within(new Promise<string>((resolve, reject) => {
    let seen = ''
    const onData = (chunk: Buffer) => { seen += chunk; const match = /(http:\/\/127\.0\.0\.1:\d+\/mcp)/.exec(seen); if (match) resolve(match[1]!) }
    child.stdout!.on('data', onData)
    child.stderr!.on('data', onData)
    child.on('exit', code => reject(new Error(`${side} exited ${code}: ${seen}`)))
  }), 20_000, `${side} did not print its URL`)
  return { child, url: new URL(url) }
}

const agent = new Agent({ keepAlive: true, maxSockets: 256 })

/**
 * The JSON-RPC response with `id` in an answer body: the body itself when JSON, else the `data`
 * of the SSE event that carries it (notifications before it are skipped).
 */
function responseIn(body: string, contentType: string | undefined, id: number): RawResponse | undefined {
  if (contentType?.includes('text/event-stream') !== true) return JSON.parse(body) as RawResponse
  for (const event of body.split(/\r?\n\r?\n/)) {
    const data = event.split(/\r?\n/).filter(line => line.startsWith('data:')).map(line => line.slice(line[5] === ' ' ? 6 : 5)).join('\n')
    if (data === '') continue
    const message = JSON.parse(data) as RawResponse & { method?: string }
    if (message.method === undefined && message.id === id) return message
  }
  return undefined
}

/**
 * One modern `method` request over HTTP (`params` as JSON text, `name` for Mcp-Name); resolves with
 * its JSON-RPC response, or rejects on an HTTP status other than 200 or an answer without it.
 */
export function postModern(url: URL, id: number, method: string, params: string, name?: string): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = {
      'content-type': 'application/json', accept: 'application/json, text/event-stream',
      'mcp-protocol-version': MODERN_VERSION, 'mcp-method': method,
    }
    if (name !== undefined) headers['mcp-name'] = name
    const req = httpRequest({ host: url.hostname, port: url.port, path: url.pathname, method: 'POST', headers, agent }, res => {
      let body = ''
      res.setEncoding('utf8')
      res.on('data', chunk => { body += chunk })
      res.on('end', () => {
        try {
          const message = res.statusCode === 200 ? responseIn(body, res.headers['content-type'], id) : undefined
          if (message === undefined) reject(new Error(`${method}: HTTP ${res.statusCode}: ${body.slice(0, 200)}`))
          else resolve(message)
        } catch (error) {
          reject(error)
        }
      })
      res.on('error', reject)
    })
    req.on('error', reject)
    req.end(`{"jsonrpc":"2.0","id":${id},"method":"${method}","params":${params}}`)
  })
}

// ---------------------------------------------------------------------------------------------
// stdio
// ---------------------------------------------------------------------------------------------

/** Spawns a side's stdio server under the raw driver and opens the modern era with `server/discover`. */
export async function startModernStdio(side: ModernSide, timeoutMs = 20_000, cwd = root): Promise<RawDriver> {
  const driver = new RawDriver(process.execPath, serverArgs(MODERN_SERVERS.stdio[side], cwd), cwd)
  try {
    await within(driver.request('server/discover', JSON.parse(`{"_meta":${META_JSON}}`) as object), timeoutMs, `${side} did not answer server/discover`)
  } catch (error) {
    driver.child.kill('SIGKILL')
    throw error
  }
  return driver
}
