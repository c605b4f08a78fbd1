/**
 * `rxmcp inspect --ui`: the web inspector's local server. One MCP client (made by the caller's
 * `connect`, given the handlers and inspection callback this file supplies) is shown to a page
 * served on 127.0.0.1:
 *
 *   browser ── GET /?token=T ──────────▶ the page (HTML; script and styles from /app.js)
 *           ── GET /events?token=T ────▶ Server-Sent Events: history first, then live events
 *           ── POST /api/<op> ─────────▶ a client call (X-Rxmcp-Token: T), its answer as JSON
 *   app frame ─ GET http://localhost:PORT/sandbox-proxy ▶ an MCP App's sandbox proxy (no token:
 *               it holds no secret, and its origin, localhost, is refused by everything else)
 *
 * Security (a page of another origin, or a DNS-rebinding name, gets nothing): every request needs
 * the token (query `token` or header `X-Rxmcp-Token`, compared in constant time); the Host header
 * must name the loopback listener (127.0.0.1, localhost or [::1] with its port); an Origin header,
 * when present, must be the printed origin (`http://127.0.0.1:PORT`); a cross-site request that is not a navigation
 * is refused. Each failure is a 403 with no body beyond a reason. Pages are sent with a CSP, no
 * referrer (the token is in the URL) and no caching.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import { randomBytes, timingSafeEqual } from 'node:crypto'
import { existsSync, readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { spawn } from 'node:child_process'
import type { AddressInfo } from 'node:net'
import { lastValueFrom, toArray, type Subscription } from '../lib/rx.ts'
import type { ClientOptions, McpClient } from '../actors/client.ts'
import type { InspectionEvent } from '../lib/connection.ts'
import type { JsonObject } from '../lib/jsonrpc/message.ts'
import type { LoggingLevel, Root } from '../lib/schema/types.ts'
import type { HostConfig } from '../lib/host-config.ts'
import { createHost, startServerClient, type Host } from '../host/host.ts'
import { sandboxProxyHtml } from '../host/app-bridge.ts'
import { uiCapability } from '../lib/apps.ts'

/** Options of {@link serveInspectorUi}. */
export interface InspectorUiOptions {
  /** Makes the client, with the handlers and the inspection callback given (the UI answers the server's asks). */
  connect: (options: ClientOptions) => Promise<McpClient>
  /** What the connection runs over, as the page shows it (`stdio: node server.js`, a URL). */
  transport: string
  /** The port on 127.0.0.1 (default 0: a free one). */
  port?: number
  /** The roots offered to the server at first (the page can change them). */
  roots?: Root[]
  /** The page's script (default {@link inspectorBundle}). */
  bundle?: () => Promise<string>
  /** `--config`: this server's name in the host's configuration. */
  name?: string
  /** `--config`: every server's page (name and URL, this one's included), for the page's server picker. */
  peers?: () => { name: string; url: string }[]
}

/** A running web inspector. */
export interface InspectorUi {
  /** `http://127.0.0.1:PORT/?token=…`: the one address that opens the page. */
  readonly url: string
  readonly port: number
  readonly token: string
  readonly client: McpClient
  /** Closes the listener (ending every event stream) and the client. */
  close(): Promise<void>
}

/** An event the page receives on /events (and again as history when it connects later). */
export type UiEvent = JsonObject & { type: string; t: number }

/** Most events kept for pages that connect later (older ones are dropped first). */
const HISTORY_LIMIT = 5_000
/** Most bytes a POST body may carry. */
const MAX_BODY = 4 * 1024 * 1024

/**
 * Connects the client and serves the inspector page for it on 127.0.0.1; resolves once both are up.
 * Rejects (and closes what it opened) when the client cannot connect.
 * @example
 * const ui = await serveInspectorUi({ transport: 'stdio: node server.js', connect: options => connect(stdioClient(…), info, options) })
 * console.log(`UI: ${ui.url}`)
 */
export async function serveInspectorUi(options: InspectorUiOptions): Promise<InspectorUi> {
  const token = randomBytes(32).toString('base64url')
  const started = Date.now()
  // Events so far, replayed to each page that connects.
  const history: UiEvent[] = []
  // The pages' open event streams.
  const streams = new Set<ServerResponse>()
  // The server's asks (elicitation, sampling) waiting for the person, by ask id.
  const asks = new Map<string, (answer: JsonObject) => void>()
  // Tool calls running, by the page's call id: unsubscribing cancels.
  const calls = new Map<string, Subscription>()
  // Resource subscriptions asked for, by URI.
  const subscriptions = new Map<string, Subscription>()
  let nextAsk = 1
  const emit = (event: JsonObject & { type: string }) => {
    const full = { ...event, t: Date.now() - started } as UiEvent
    history.push(full)
    if (history.length > HISTORY_LIMIT) history.splice(0, history.length - HISTORY_LIMIT)
    const frame = `data: ${JSON.stringify(full)}\n\n`
    for (const stream of streams) stream.write(frame)
  }
  // An ask the person answers in the page: `{ result }`, or `{ error }` to refuse it (an error response).
  const ask = (kind: string, params: unknown) => new Promise<JsonObject>((resolve, reject) => {
    const id = String(nextAsk++)
    asks.set(id, answer => {
      asks.delete(id)
      emit({ type: 'answered', id })
      if (typeof answer.error === 'string') reject(new Error(answer.error))
      else resolve(answer.result as JsonObject)
    })
    emit({ type: 'ask', id, kind, params: params as JsonObject })
  })
  let roots = options.roots ?? []
  // What this client declared, read off its handshake (initialize params, or a modern request's _meta).
  let clientCapabilities: JsonObject = {}
  const inspect = (event: InspectionEvent) => {
    if (event.type === 'rxmcp.frame.in') emit({ type: 'frame', dir: 'in', message: event.message as JsonObject })
    else if (event.type === 'rxmcp.frame.out') {
      const message = event.message as { method?: string; params?: { capabilities?: JsonObject; _meta?: Record<string, unknown> } }
      const declared = message.method === 'initialize' ? message.params?.capabilities : message.params?._meta?.['io.modelcontextprotocol/clientCapabilities'] as JsonObject | undefined
      if (declared !== undefined) clientCapabilities = declared
      emit({ type: 'frame', dir: 'out', message: event.message as unknown as JsonObject })
    }
    else if (event.type === 'rxmcp.closed') emit({ type: 'closed', error: event.error === undefined ? null : String(event.error) })
  }
  const client = await options.connect({
    inspect,
    roots,
    elicitation: {
      form: params => ask('elicitation', params) as never,
      url: params => ask('elicitation-url', params) as never,
    },
    sampling: params => ask('sampling', params) as never,
    tasks: true,
    // The page renders MCP Apps: the extension is declared (io.modelcontextprotocol/ui).
    capabilities: uiCapability(),
  })
  const describe = (): JsonObject => ({
    type: 'connection',
    transport: options.transport,
    era: client.era ?? null,
    protocolVersion: client.protocolVersion,
    serverInfo: client.serverInfo as unknown as JsonObject,
    serverCapabilities: client.serverCapabilities as JsonObject,
    clientCapabilities,
    instructions: client.instructions ?? null,
    roots: roots as unknown as JsonObject[],
  })
  emit(describe() as JsonObject & { type: string })
  const notifications = ['notifications/message', 'notifications/resources/updated', 'notifications/resources/list_changed',
    'notifications/tools/list_changed', 'notifications/prompts/list_changed', 'notifications/tasks/status']
  const listening = notifications.map(method => client.notifications(method as never).subscribe({
    next: params => emit({ type: 'notification', method, params: params as JsonObject }),
    error: () => {},
  }))

  const bundle = options.bundle ?? inspectorBundle
  let script: Promise<string> | undefined

  const api: Record<string, (body: JsonObject) => Promise<unknown>> = {
    connection: async () => describe(),
    servers: async () => ({ current: options.name ?? null, servers: options.peers?.() ?? [] }),
    // Every page of each list.
    tools: async () => ({ tools: await lastValueFrom(client.tools().pipe(toArray())) }),
    resources: async () => ({ resources: await lastValueFrom(client.resources().pipe(toArray())) }),
    templates: async () => ({ resourceTemplates: await lastValueFrom(client.resourceTemplates().pipe(toArray())) }),
    prompts: async () => ({ prompts: await lastValueFrom(client.prompts().pipe(toArray())) }),
    skills: async () => ({ skills: client.skills.isSupported ? await client.skills.list() : [] }),
    skill: async input => { const loaded = await client.skills.load(String(input.uri)); return { skill: JSON.parse(JSON.stringify(loaded, (_key, value) => value instanceof Uint8Array ? new TextDecoder().decode(value) : value)) } },
    read: async input => client.readResource(String(input.uri)),
    subscribe: async input => {
      const uri = String(input.uri)
      if (subscriptions.has(uri)) return {}
      await new Promise<void>((resolve, reject) => {
        const subscription = client.listen({ resourceSubscriptions: [uri] }).subscribe({
          next: event => {
            if (event.type === 'acknowledged') resolve()
            else emit({ type: 'notification', method: event.method, params: event.params, via: 'listen' })
          },
          error: error => { subscriptions.delete(uri); reject(error) },
        })
        subscriptions.set(uri, subscription)
      })
      return {}
    },
    unsubscribe: async input => { subscriptions.get(String(input.uri))?.unsubscribe(); subscriptions.delete(String(input.uri)); return {} },
    prompt: async input => client.getPrompt(String(input.name), input.arguments as Record<string, string>),
    complete: async input => client.complete(input.params as never),
    level: async input => { await client.setLoggingLevel(String(input.level) as LoggingLevel); return {} },
    roots: async input => { roots = input.roots as unknown as Root[]; client.setRoots(roots); emit(describe() as UiEvent); return {} },
    answer: async input => {
      const answer = asks.get(String(input.id))
      if (answer === undefined) throw new Error(`No open ask ${input.id}`)
      answer(input)
      return {}
    },
    call: input => new Promise((resolve, reject) => {
      const callId = String(input.callId)
      const args = (input.arguments ?? {}) as Record<string, unknown>
      const settle = (outcome: () => void) => { calls.delete(callId); outcome() }
      if (input.asTask === true) {
        const subscription = client.callToolAsTask(String(input.name), args).subscribe({
          next: event => {
            if (event.type === 'task') emit({ type: 'task', callId, task: event.task as unknown as JsonObject })
            else settle(() => resolve({ result: event.result }))
          },
          error: error => settle(() => reject(error)),
          complete: () => settle(() => resolve({ cancelled: true })),
        })
        calls.set(callId, subscription)
        return
      }
      const subscription = client.callTool$(String(input.name), args).subscribe({
        next: event => {
          if (event.type === 'progress') emit({ type: 'progress', callId, progress: event.progress, total: event.total ?? null, message: event.message ?? null })
          else settle(() => resolve({ result: event.result }))
        },
        error: error => settle(() => reject(error)),
      })
      // A call cancelled before its result ends the page's POST too.
      subscription.add(() => { if (calls.get(callId) === subscription) settle(() => resolve({ cancelled: true })) })
      calls.set(callId, subscription)
    }),
    cancel: async input => { calls.get(String(input.callId))?.unsubscribe(); return {} },
    tasks: async () => client.tasks.list(),
    task: async input => client.tasks.get(String(input.taskId)),
    cancelTask: async input => { await client.tasks.cancel(String(input.taskId)); return {} },
    taskResult: async input => client.tasks.result(String(input.taskId)),
    ping: async () => { await client.ping(); return {} },
  }

  const server = createServer((request, response) => {
    void handle(request, response).catch(error => {
      if (!response.headersSent) send(response, 500, 'text/plain', String(error))
      else response.end()
    })
  })
  async function handle(request: IncomingMessage, response: ServerResponse) {
    const url = new URL(request.url ?? '/', 'http://127.0.0.1')
    // An MCP App's sandbox proxy: on the other loopback name only, so that its origin is not the page's.
    if (url.pathname === '/sandbox-proxy') {
      if (request.method !== 'GET' || request.headers.host !== `localhost:${port}`) return send(response, 403, 'text/plain', 'Forbidden: Host\n')
      return send(response, 200, 'text/html; charset=utf-8', sandboxProxyHtml(), proxyHeaders(port))
    }
    const refusal = refuse(request, url, port, token)
    if (refusal !== undefined) return send(response, 403, 'text/plain', `Forbidden: ${refusal}\n`)
    if (request.method === 'GET' && url.pathname === '/') return send(response, 200, 'text/html; charset=utf-8', page(token), pageHeaders(port))
    if (request.method === 'GET' && url.pathname === '/app.js') {
      script ??= bundle()
      return send(response, 200, 'text/javascript; charset=utf-8', await script)
    }
    if (request.method === 'GET' && url.pathname === '/events') {
      response.writeHead(200, { 'content-type': 'text/event-stream', connection: 'keep-alive', ...COMMON_HEADERS })
      for (const event of history) response.write(`data: ${JSON.stringify(event)}\n\n`)
      streams.add(response)
      request.on('close', () => streams.delete(response))
      return
    }
    const op = request.method === 'POST' && url.pathname.startsWith('/api/') ? api[url.pathname.slice('/api/'.length)] : undefined
    if (op === undefined || !Object.hasOwn(api, url.pathname.slice('/api/'.length))) return send(response, 404, 'text/plain', 'Not found\n')
    if (!/^application\/json\b/.test(request.headers['content-type'] ?? '')) return send(response, 415, 'text/plain', 'JSON only\n')
    let input: JsonObject
    try {
      const text = await readBody(request)
      input = text === '' ? {} : JSON.parse(text) as JsonObject
    } catch (error) {
      return send(response, 400, 'text/plain', `${(error as Error).message}\n`)
    }
    try {
      send(response, 200, 'application/json', JSON.stringify(await op(input) ?? {}))
    } catch (error) {
      const failure = error as { name?: string; message?: string; code?: unknown; data?: unknown }
      send(response, 200, 'application/json', JSON.stringify({ error: { name: failure.name ?? 'Error', message: failure.message ?? String(error), code: failure.code ?? null, data: failure.data ?? null } }))
    }
  }
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(options.port ?? 0, '127.0.0.1', () => { server.off('error', reject); resolve() })
  }).catch(async error => { await client.close(); throw error })
  const port = (server.address() as AddressInfo).port
  client.closed.then(() => emit({ type: 'closed', error: null }), () => {})
  return {
    url: `http://127.0.0.1:${port}/?token=${token}`,
    port,
    token,
    client,
    async close() {
      for (const subscription of [...calls.values(), ...subscriptions.values(), ...listening]) subscription.unsubscribe()
      for (const stream of streams) stream.end()
      streams.clear()
      server.closeAllConnections()
      await new Promise<void>(resolve => server.close(() => resolve()))
      await client.close()
    },
  }
}

const COMMON_HEADERS = {
  'referrer-policy': 'no-referrer',
  'x-content-type-options': 'nosniff',
  'cache-control': 'no-store',
  'cross-origin-resource-policy': 'same-origin',
} as const

// The page loads only its own script; images and audio of results come as data: URLs; an app's
// view (MCP Apps) is a sandboxed frame, its proxy served from another origin of the listener
// (http://localhost:PORT, which the API refuses: see `refuse`) or a blob:/data: URL.
const pageHeaders = (port: number) => ({
  'content-security-policy': `default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; media-src data:; connect-src 'self'; frame-src blob: data: http://localhost:${port}; frame-ancestors 'none'; base-uri 'none'; form-action 'none'`,
  'x-frame-options': 'DENY',
})

// The sandbox proxy: its inline script runs (no script-src here), only the page may frame it, and
// no plugin or <base>. The view it frames is a srcdoc frame, which inherits this policy on top of
// its own (the bridge's <meta>, from the resource's CSP metadata): a script-src here would also
// block the script origins a view declares, so the view's own policy is the one that narrows it.
const proxyHeaders = (port: number) => ({
  'content-security-policy': `frame-ancestors http://127.0.0.1:${port} http://localhost:${port}; object-src 'none'; base-uri 'none'`,
})

function send(response: ServerResponse, status: number, type: string, text: string, headers: Record<string, string> = {}) {
  response.writeHead(status, { 'content-type': type, 'content-length': Buffer.byteLength(text), ...COMMON_HEADERS, ...headers })
  response.end(text)
}

/** Why a request is refused (403), or undefined when it may go on. */
export function refuse(request: IncomingMessage, url: URL, port: number, token: string): string | undefined {
  const names = [`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`]
  // DNS rebinding: a foreign name resolving to 127.0.0.1 still sends its own Host.
  if (!names.includes(request.headers.host ?? '')) return 'Host'
  // One origin only, the printed one: another loopback name is another origin (an MCP App's sandbox
  // proxy may be served from one, and must not reach the API even if it learnt the token).
  const origin = request.headers.origin
  if (origin !== undefined && origin !== `http://127.0.0.1:${port}`) return 'Origin'
  // A page of another site may link to the inspector (a navigation, which still needs the token),
  // never fetch from it or embed its script.
  if (request.headers['sec-fetch-site'] === 'cross-site' && request.headers['sec-fetch-mode'] !== 'navigate') return 'Sec-Fetch-Site'
  const header = request.headers['x-rxmcp-token']
  const given = typeof header === 'string' ? header : url.searchParams.get('token') ?? ''
  const expected = Buffer.from(token)
  const actual = Buffer.from(given)
  if (actual.length !== expected.length || !timingSafeEqual(actual, expected)) return 'token'
  return undefined
}

function readBody(request: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = []
    let size = 0
    request.on('data', (chunk: Buffer) => {
      size += chunk.length
      if (size > MAX_BODY) { reject(new Error('Body too large')); request.destroy() } else chunks.push(chunk)
    })
    request.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')))
    request.on('error', reject)
  })
}

/** The page: the token goes to the script through a data attribute (no inline script under the CSP). */
function page(token: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>rxmcp inspector</title></head>
<body data-token="${token}"><div id="app">Loading…</div><script type="module" src="/app.js?token=${token}"></script></body></html>
`
}

/**
 * The page's script: `dist/ui/inspector.js` as built with the package (`scripts/bundle-ui.ts`),
 * or, running from sources (tsx), `ui/main.tsx` bundled now with esbuild (a dev dependency there).
 */
export async function inspectorBundle(): Promise<string> {
  const here = dirname(fileURLToPath(import.meta.url))
  const built = join(here, '..', 'ui', 'inspector.js')
  if (existsSync(built)) return readFileSync(built, 'utf8')
  const source = join(here, '..', 'ui', 'main.tsx')
  if (!existsSync(source)) throw new Error(`The inspector's page is missing: neither ${built} nor ${source}`)
  const { buildInspectorBundle } = await import(/* @vite-ignore */ join(here, '..', 'scripts', 'bundle-ui.ts')) as { buildInspectorBundle: () => Promise<string> }
  return buildInspectorBundle()
}

/** Opens `url` in the desktop's browser; errors are ignored (the URL is printed anyway). */
export function openBrowser(url: string): void {
  const command = process.platform === 'darwin' ? 'open' : process.platform === 'win32' ? 'explorer' : 'xdg-open'
  try {
    const child = spawn(command, [url], { stdio: 'ignore', detached: true })
    child.on('error', () => {})
    child.unref()
  } catch { /* no browser to open */ }
}

/** The web inspectors of a host's servers (`rxmcp inspect --ui --config FILE`). */
export interface HostInspectorUi {
  /** One page per server that connected, by server name (each its own port and token). */
  readonly pages: ReadonlyMap<string, InspectorUi>
  /** The servers that did not connect, with why. */
  readonly failures: ReadonlyMap<string, string>
  readonly host: Host
  /** Closes every page and stops the host. */
  close(): Promise<void>
}

/**
 * `rxmcp inspect --ui --config FILE`: the host of `config` starts every server; each server's client
 * (the host's own, made by its `start` with the page's handlers and inspection callback added) gets
 * a page of its own, and every page offers the others in its server picker. The first server's
 * page listens on `port` (default a free one), the others on free ports.
 */
export async function serveHostInspectorUi(config: HostConfig, options: { port?: number; bundle?: () => Promise<string> } = {}): Promise<HostInspectorUi> {
  const servers = [...config.servers.values()].filter(server => !server.disabled)
  // Per server: the page's handlers (given when its serveInspectorUi connects), and the client the host made with them.
  const deferred = <T>() => { let resolve: (value: T) => void = () => {}; let reject: (error: unknown) => void = () => {}; const promise = new Promise<T>((ok, fail) => { resolve = ok; reject = fail }); return { promise, resolve, reject } }
  const handlers = new Map(servers.map(server => [server.name, deferred<ClientOptions>()]))
  const clients = new Map(servers.map(server => [server.name, deferred<McpClient>()]))
  const host = createHost(config, {
    restart: { retries: 0 },
    apps: true,
    start: async (server, hostOptions, stderr) => {
      const uiOptions = await handlers.get(server.name)!.promise
      const run = startServerClient(server, { ...hostOptions, inspect: uiOptions.inspect, elicitation: uiOptions.elicitation, sampling: uiOptions.sampling, tasks: uiOptions.tasks },
        stderr, { name: 'rxmcp-inspector', version: '0.1.0' })
      run.then(started => clients.get(server.name)!.resolve(started.client), error => clients.get(server.name)!.reject(error))
      return run
    },
  })
  const pages = new Map<string, InspectorUi>()
  const failures = new Map<string, string>()
  const peers = () => [...pages].map(([name, page]) => ({ name, url: page.url }))
  for (const [index, server] of servers.entries()) {
    try {
      const page = await serveInspectorUi({
        name: server.name,
        peers,
        port: index === 0 ? options.port : 0,
        bundle: options.bundle,
        // No arguments, headers or query: a config's ${VAR} secrets may sit there.
        transport: server.url !== undefined ? `${server.type}: ${new URL(server.url).origin}` : `stdio: ${server.command}`,
        connect: uiOptions => { handlers.get(server.name)!.resolve(uiOptions); return clients.get(server.name)!.promise },
      })
      pages.set(server.name, page)
    } catch (error) {
      failures.set(server.name, (error as Error).message)
    }
  }
  return {
    pages,
    failures,
    host,
    async close() {
      await Promise.all([...pages.values()].map(page => page.close().catch(() => {})))
      await host.close()
    },
  }
}
