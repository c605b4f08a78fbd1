/**
 * The rxmcp command line:
 *
 *   rxmcp inspect [--json] -- CMD ARGS...          server info, tools, resources, templates, prompts
 *   rxmcp call [--json] TOOL 'JSON' -- CMD ARGS...  the tool result as JSON on stdout; progress on stderr
 *   rxmcp inspect --ui [--port N] [--no-open] -- CMD  the web inspector on 127.0.0.1 (see inspect-ui.ts)
 *
 * Exit codes: 0 success, 1 failure (or a tool result with isError), 2 usage error.
 */
import { lastValueFrom, toArray, EMPTY, type Observable } from '../lib/rx.ts'
import { connect, type ClientEra, type ClientOptions, type McpClient } from '../actors/client.ts'
import { openBrowser, serveHostInspectorUi, serveInspectorUi } from './inspect-ui.ts'
import { stdioClient, type StdioClientTransport } from '../transports/stdio.ts'
import { httpClient } from '../transports/http-client.ts'
import { websocket, websocketClient } from '../transports/websocket.ts'
import { streamableHttp } from '../transports/streamable-http.ts'
import { bridge, bridgeChild, shareUpstream, BRIDGE_DEFAULTS, SHARED_UPSTREAM_DEFAULTS } from '../transports/bridge.ts'
import { closeServer, listenOn, urlHost } from '../transports/listen.ts'
import { createServer as createHttpServer } from 'node:http'
import { progressBar } from './progress-bar.ts'
import { authorizingFetch, type AuthFlags } from './auth.ts'
import { inspectHost, loadConfig, serveGateway, type HostFlags } from './host.ts'
import { exposure, exposureFlags, parseExposureFlag, refuseCrossSite, ExposureError, type ExposureFlags } from './exposure.ts'
import { chat } from './chat.ts'
import { isTelemetryAsked, startOtel, type OtelSdk } from './otel.ts'
import { telemetryOf } from '../actors/telemetry-option.ts'

const USAGE = `Usage:
  rxmcp inspect [--json] -- COMMAND [ARGS...] | URL
  rxmcp inspect --ui [--port 0] [--no-open] [--era auto|legacy|modern] -- COMMAND [ARGS...] | URL
  rxmcp call TOOL ['{"json":"arguments"}'] [--timeout MS] -- COMMAND [ARGS...] | URL
  rxmcp bridge [--port 3000] [LISTEN OPTIONS] [--shared] [--max-children 8] [--max-children-per-client 4]
               [--child-idle-timeout MS] [--inherit-env] [--env NAME[=VALUE]]... -- COMMAND [ARGS...]
  rxmcp gateway --config mcp.json [--port 3000] [--per-session] [LISTEN OPTIONS] [--audit-log FILE|-]
  rxmcp inspect --config mcp.json [--json] [--wait-ms 15000]
  rxmcp inspect --ui --config mcp.json [--port 0] [--no-open]   (a page per server, a picker between them)
  rxmcp chat --config mcp.json --model anthropic:MODEL|openai:MODEL [--base-url URL] [--system TEXT]
  rxmcp --help

Listen options (bridge, and gateway with --port):
  --host ADDRESS            the interface to bind (default 127.0.0.1)
  --allowed-host NAME       a Host header accepted beside the loopback names and --host (repeatable)
  --allowed-origin ORIGIN   a browser Origin accepted beside the loopback ones (repeatable)
  --auth-token-file FILE    every request needs this bearer token (the file's text, mode 0600, 32+ characters)
  --auth-issuer URL --auth-jwks-url URL --auth-resource URL [--auth-scope SCOPE]...
                            every request needs an OAuth JWT access token of that issuer for that resource
  --allow-unauthenticated   beyond loopback without authentication: accept that anyone who can reach it uses it
  Beyond loopback (--host 0.0.0.0) a command refuses to start without authentication or
  --allow-unauthenticated, prints a warning, and refuses Host headers outside the allow-list.

The gateway reads a "gateway" object beside "mcpServers" in its config: auth (an OAuth issuer with
JWKS or introspection), policy (who sees and calls what), rateLimit (per principal), audit (JSON lines,
arguments redacted by rule), health (GET /healthz). --audit-log FILE (- for stderr) writes the audit
log there, over the config's file.

inspect --ui serves the web inspector on 127.0.0.1 (--port, default a free one), prints
  UI: http://127.0.0.1:PORT/?token=...
and opens the browser (unless --no-open); every request needs that token, and Host and Origin must be
the listener's own. It runs until SIGINT or SIGTERM, or until the server goes away.

Auth options (inspect and call, for a server at an http(s) URL):
  --token-store PATH   where tokens are kept, mode 0600 (default ~/.config/rxmcp/tokens.json)
  --client-id ID       a pre-registered client (else Dynamic Client Registration)
  --client-secret S    its secret (or RXMCP_CLIENT_SECRET); needs --issuer
  --issuer URL         the authorization server the client id is from (or RXMCP_ISSUER): the only one used
  --scope SCOPES       the scopes to ask for (default: what the server says it needs)
  --redirect-port N    the loopback port the browser comes back to (default any free one)
  --no-auth            never authorize: a 401 is an error

The server is started as a child process speaking MCP over stdio, or reached at a URL: http(s)
(Streamable HTTP, falling back to legacy HTTP+SSE) or ws(s) (WebSocket).
bridge serves a stdio server over Streamable HTTP (/mcp), legacy SSE (/sse) and WebSocket (/mcp),
one child process per session (started on the session's first message, at most --max-children at
once and --max-children-per-client per remote address, stopped after --child-idle-timeout ms without
traffic), or shared by every session with --shared (for stateless servers: sessions that can be asked
things, elicitation, sampling or roots, each get a child of their own while a request of theirs runs, up
to --max-children (default 4) per protocol version, and wait beyond). Children get a minimal
environment (PATH, HOME, ...) plus each --env, or all of it with --inherit-env.
gateway and bridge take the standard OpenTelemetry variables: with OTEL_EXPORTER_OTLP_ENDPOINT (or
OTEL_TRACES_EXPORTER / OTEL_METRICS_EXPORTER other than none) set, they start the OpenTelemetry Node
SDK (npm install @opentelemetry/api @opentelemetry/sdk-node), which reads OTEL_SERVICE_NAME,
OTEL_EXPORTER_OTLP_PROTOCOL and the rest, and trace every request through them.
Exit codes: 0 success, 1 failure or a tool result with isError, 2 usage error.`

class UsageError extends Error {}

interface Parsed {
  command: 'inspect' | 'call' | 'bridge' | 'help'
  port?: number
  isShared?: boolean
  bridge?: BridgeFlags
  isJson: boolean
  timeout?: number
  positional: string[]
  server: string[]
  auth: AuthFlags
  /** inspect --ui: the web inspector. */
  isUi?: boolean
  /** inspect --ui --no-open: print the URL only. */
  isNoOpen?: boolean
  /** inspect --era: which generation of MCP the client speaks. */
  era?: ClientEra
}

function parse(argv: string[]): Parsed {
  const dash = argv.indexOf('--')
  let own = dash < 0 ? argv : argv.slice(0, dash)
  let server = dash < 0 ? [] : argv.slice(dash + 1)
  // A trailing http(s) URL names the server instead of a command.
  const last = own.at(-1)
  if (server.length === 0 && last !== undefined && /^(https?|wss?):\/\//.test(last)) {
    server = [last]
    own = own.slice(0, -1)
  }
  if (own.length === 0 || own.includes('--help') || own.includes('-h')) return { command: 'help', isJson: false, positional: [], server, auth: { isDisabled: true } }
  const [command, ...rest] = own
  if (command !== 'inspect' && command !== 'call' && command !== 'bridge') throw new UsageError(`Unknown command: ${command}`)
  let isJson = false
  let timeout: number | undefined
  let port: number | undefined
  let isShared = false
  let isUi = false
  let isNoOpen = false
  let era: ClientEra | undefined
  const flags: BridgeFlags = { env: {}, isInheritEnv: false, exposure: exposureFlags() }
  const count = (name: string, value: string | undefined, min: number) => {
    const number = Number(value)
    if (!Number.isInteger(number) || number < min) throw new UsageError(`${name} needs a whole number of at least ${min}`)
    return number
  }
  const positional: string[] = []
  const auth: AuthFlags = { isDisabled: false }
  const text = (name: string, value: string | undefined) => {
    if (value === undefined || value === '') throw new UsageError(`${name} needs a value`)
    return value
  }
  for (let i = 0; i < rest.length; i++) {
    const arg = rest[i]!
    const last = command === 'bridge' ? parseExposureFlag(rest, i, flags.exposure, message => new UsageError(message)) : undefined
    if (last !== undefined) i = last
    else if (arg === '--json') isJson = true
    else if (arg === '--token-store' && command !== 'bridge') auth.tokenStore = text(arg, rest[++i])
    else if (arg === '--client-id' && command !== 'bridge') auth.clientId = text(arg, rest[++i])
    else if (arg === '--client-secret' && command !== 'bridge') auth.clientSecret = text(arg, rest[++i])
    else if (arg === '--issuer' && command !== 'bridge') auth.issuer = text(arg, rest[++i])
    else if (arg === '--scope' && command !== 'bridge') auth.scope = text(arg, rest[++i])
    else if (arg === '--redirect-port' && command !== 'bridge') auth.redirectPort = count(arg, rest[++i], 0)
    else if (arg === '--no-auth' && command !== 'bridge') auth.isDisabled = true
    else if (arg === '--timeout') {
      timeout = Number(rest[++i])
      if (!Number.isFinite(timeout) || timeout < 0) throw new UsageError('--timeout needs a number of milliseconds')
    } else if (arg === '--ui' && command === 'inspect') {
      isUi = true
    } else if (arg === '--no-open' && command === 'inspect') {
      isNoOpen = true
    } else if (arg === '--era' && command !== 'bridge') {
      const value = rest[++i]
      if (value !== 'auto' && value !== 'legacy' && value !== 'modern') throw new UsageError('--era needs auto, legacy or modern')
      era = value
    } else if (arg === '--port' && (command === 'bridge' || command === 'inspect')) {
      port = Number(rest[++i])
      if (!Number.isInteger(port) || port < 0 || port > 65535) throw new UsageError('--port needs a port number')
    } else if (arg === '--shared' && command === 'bridge') {
      isShared = true
    } else if (arg === '--max-children' && command === 'bridge') {
      flags.maxChildren = count(arg, rest[++i], 1)
    } else if (arg === '--max-children-per-client' && command === 'bridge') {
      flags.maxChildrenPerClient = count(arg, rest[++i], 1)
    } else if (arg === '--child-idle-timeout' && command === 'bridge') {
      flags.childIdleTimeout = count(arg, rest[++i], 0)
    } else if (arg === '--inherit-env' && command === 'bridge') {
      flags.isInheritEnv = true
    } else if (arg === '--env' && command === 'bridge') {
      const entry = rest[++i]
      if (entry === undefined || entry === '' || entry.startsWith('=')) throw new UsageError('--env needs NAME or NAME=VALUE')
      const equals = entry.indexOf('=')
      // NAME alone passes this process's value through.
      if (equals < 0) { if (process.env[entry] !== undefined) flags.env[entry] = process.env[entry]! }
      else flags.env[entry.slice(0, equals)] = entry.slice(equals + 1)
    } else if (arg.startsWith('--')) throw new UsageError(`Unknown option: ${arg}`)
    else positional.push(arg)
  }
  if (server.length === 0) throw new UsageError('Give the server command after --, or its http(s) URL')
  if (command === 'call' && (positional.length < 1 || positional.length > 2)) throw new UsageError('call needs a tool name and optionally JSON arguments')
  if (command !== 'call' && positional.length > 0) throw new UsageError(`${command} takes no arguments before --`)
  if (command === 'bridge' && /^(https?|wss?):\/\//.test(server[0]!)) throw new UsageError('bridge needs a command to spawn, not a URL')
  if (port !== undefined && command === 'inspect' && !isUi) throw new UsageError('--port is for inspect --ui')
  if (isNoOpen && !isUi) throw new UsageError('--no-open is for inspect --ui')
  return { command, isJson, timeout, positional, server, port, isShared, bridge: flags, auth, isUi, isNoOpen, era }
}

/** The bridge command's own options. */
interface BridgeFlags {
  maxChildren?: number
  maxChildrenPerClient?: number
  childIdleTimeout?: number
  env: Record<string, string>
  isInheritEnv: boolean
  /** Who may reach the listener (see exposure.ts). */
  exposure: ExposureFlags
}

/** Closes what authorization opened (the loopback listener), once the command is done. */
let closeAuth = async () => {}

async function open(parsed: Parsed, options: ClientOptions = {}): Promise<McpClient> {
  const [command, ...args] = parsed.server
  const info = { name: 'rxmcp-cli', version: '0.1.0' }
  const withEra = parsed.era === undefined ? options : { ...options, era: parsed.era }
  if (args.length === 0 && /^https?:\/\//.test(command!)) {
    const auth = authorizingFetch(parsed.auth)
    closeAuth = auth.close
    return connect(httpClient(command!, { fetch: auth.fetch }), info, withEra)
  }
  if (args.length === 0 && /^wss?:\/\//.test(command!)) return connect(websocketClient(command!), info, withEra)
  return connect(stdioClient({ command: command!, args, stderr: 'inherit', inheritEnv: true }), info, withEra)
}

/** What the client runs over, as the web inspector shows it. */
function transportOf(parsed: Parsed): string {
  const [command, ...args] = parsed.server
  if (args.length === 0 && /^https?:\/\//.test(command!)) return `Streamable HTTP (legacy HTTP+SSE fallback): ${command}`
  if (args.length === 0 && /^wss?:\/\//.test(command!)) return `WebSocket: ${command}`
  return `stdio: ${parsed.server.join(' ')}`
}

/** inspect --ui --config: a page per server of the host, until SIGINT or SIGTERM. */
async function inspectUiHost(flags: HostFlags): Promise<number> {
  const uis = await serveHostInspectorUi(loadConfig(flags.config), { port: flags.port })
  for (const [name, reason] of uis.failures) process.stderr.write(`rxmcp: ${name}: ${reason}\n`)
  const first = [...uis.pages.values()][0]
  if (first === undefined) { await uis.close(); return 1 }
  process.stdout.write(`UI: ${first.url}\n`)
  if (flags.isNoOpen !== true) openBrowser(first.url)
  let stop = () => {}
  const stopped = new Promise<void>(resolve => { stop = resolve })
  process.once('SIGINT', stop)
  process.once('SIGTERM', stop)
  await stopped
  process.off('SIGINT', stop)
  process.off('SIGTERM', stop)
  await uis.close()
  return 0
}

/** inspect --ui: serves the web inspector until SIGINT or SIGTERM, or until the server goes away. */
async function inspectUi(parsed: Parsed): Promise<number> {
  const ui = await serveInspectorUi({ transport: transportOf(parsed), port: parsed.port, connect: options => open(parsed, options) })
  process.stdout.write(`UI: ${ui.url}\n`)
  if (!parsed.isNoOpen) openBrowser(ui.url)
  let stop = () => {}
  const stopped = new Promise<void>(resolve => { stop = resolve })
  process.once('SIGINT', stop)
  process.once('SIGTERM', stop)
  await Promise.race([stopped, ui.client.closed.catch(() => {})])
  process.off('SIGINT', stop)
  process.off('SIGTERM', stop)
  await ui.close()
  return 0
}

function all<T>(isOffered: unknown, list: () => Observable<T>): Promise<T[]> {
  return lastValueFrom((isOffered ? list() : EMPTY as Observable<T>).pipe(toArray()))
}

async function inspect(parsed: Parsed): Promise<number> {
  const client = await open(parsed)
  try {
    const capabilities = client.serverCapabilities
    const report = {
      serverInfo: client.serverInfo,
      protocolVersion: client.protocolVersion,
      capabilities,
      instructions: client.instructions,
      tools: await all(capabilities.tools, () => client.tools()),
      resources: await all(capabilities.resources, () => client.resources()),
      resourceTemplates: await all(capabilities.resources, () => client.resourceTemplates()),
      prompts: await all(capabilities.prompts, () => client.prompts()),
    }
    if (parsed.isJson) {
      process.stdout.write(JSON.stringify(report, null, 2) + '\n')
      return 0
    }
    const out = (line = '') => process.stdout.write(line + '\n')
    out(`${report.serverInfo.title ?? report.serverInfo.name} ${report.serverInfo.version} (protocol ${report.protocolVersion})`)
    if (report.instructions) out(report.instructions)
    out(`Capabilities: ${Object.keys(capabilities).join(', ') || 'none'}`)
    out(`\nTools (${report.tools.length})`)
    for (const tool of report.tools) out(`  ${tool.name}${tool.description ? ` - ${tool.description}` : ''}`)
    out(`\nResources (${report.resources.length})`)
    for (const resource of report.resources) out(`  ${resource.uri}${resource.mimeType ? ` (${resource.mimeType})` : ''}`)
    out(`\nResource templates (${report.resourceTemplates.length})`)
    for (const template of report.resourceTemplates) out(`  ${template.uriTemplate}`)
    out(`\nPrompts (${report.prompts.length})`)
    for (const prompt of report.prompts) {
      const args = (prompt.arguments ?? []).map(arg => arg.required ? arg.name : `${arg.name}?`).join(', ')
      out(`  ${prompt.name}(${args})${prompt.description ? ` - ${prompt.description}` : ''}`)
    }
    return 0
  } finally {
    await client.close()
  }
}

async function call(parsed: Parsed): Promise<number> {
  const [name, json] = parsed.positional as [string, string | undefined]
  let args: Record<string, unknown> | undefined
  if (json !== undefined) {
    try { args = JSON.parse(json) } catch { throw new UsageError(`The arguments are not JSON: ${json}`) }
    if (typeof args !== 'object' || args === null || Array.isArray(args)) throw new UsageError('The arguments must be a JSON object')
  }
  const client = await open(parsed)
  try {
    const bar = progressBar(process.stderr)
    let hasProgress = false
    const result = await client.callTool(name, args, {
      timeout: parsed.timeout,
      onProgress: event => { hasProgress = true; bar.update(event.progress, event.total, event.message) },
    })
    if (hasProgress) bar.done()
    process.stdout.write(JSON.stringify(result, null, 2) + '\n')
    return result.isError === true ? 1 : 0
  } finally {
    await client.close()
  }
}

/** Serves a stdio server over HTTP and WebSocket until SIGINT or SIGTERM; children are reaped on the way out. */
async function serveBridge(parsed: Parsed, isTelemetry = false): Promise<number> {
  const [command, ...args] = parsed.server
  const flags = parsed.bridge!
  const most = parsed.isShared ? `${flags.maxChildren ?? SHARED_UPSTREAM_DEFAULTS.maxUpstreams} per protocol version` : `${flags.maxChildren ?? BRIDGE_DEFAULTS.maxChildren}`
  const risk = `anyone who can reach it can start ${command} processes (up to ${most}) and use them with your rights`
  const { host, allowedHosts, allowedOrigins, auth } = await exposure('bridge', flags.exposure, risk, line => process.stderr.write(line + '\n'))
  const limit = BRIDGE_DEFAULTS.maxMessageSize
  const http = streamableHttp({ host, maxBodyBytes: limit, allowedHosts, allowedOrigins, auth })
  const ws = websocket({ host, maxFrameBytes: limit, allowedHosts, allowedOrigins, auth })
  // Children alive now, so that however this process ends, their process groups end with it.
  const children = new Set<StdioClientTransport>()
  const spawnChild = () => {
    const child = bridgeChild({ command: command!, args, env: flags.env, inheritEnv: flags.isInheritEnv })
    children.add(child)
    void child.exited.then(() => children.delete(child))
    return child
  }
  const killAll = () => {
    for (const child of children) if (child.pid !== undefined) try { process.kill(-child.pid, 'SIGKILL') } catch { /* gone */ }
  }
  process.once('exit', killAll)
  // Shared: --max-children bounds the children of each lane (see shareUpstream), not the sessions.
  const shared = parsed.isShared ? shareUpstream(spawnChild, { maxUpstreams: flags.maxChildren }) : undefined
  const running = bridge([http, ws], shared !== undefined ? () => shared.open() : spawnChild, {
    // Shared sessions cost no process each: the listeners' own caps bound them.
    // (--max-children bounds a shared lane's children instead; see shareUpstream above.)
    maxChildren: shared !== undefined ? Infinity : flags.maxChildren,
    maxChildrenPerClient: flags.maxChildrenPerClient ?? (shared !== undefined ? Infinity : undefined),
    childIdleTimeout: flags.childIdleTimeout,
    onSession: upstream => process.stderr.write(`rxmcp bridge: session started (child pid ${(upstream as { pid?: number }).pid ?? 'shared'})\n`),
  })
  // Messages pass through untouched, `_meta.traceparent` included: the child's spans continue the
  // client's trace. The bridge's own part is a gauge of its children (alive: spawned, not yet
  // exited, --shared or not).
  const instrumentation = await telemetryOf(isTelemetry)
  instrumentation?.observe?.('rxmcp.bridge.children', 'Child processes the bridge runs now.', () => children.size, '{process}')
  // One port for all three.
  const node = createHttpServer({ noDelay: true, keepAliveTimeout: 30_000 }, refuseCrossSite(http.nodeHandler))
  // The WebSocket listener shares the HTTP port: upgrades on /mcp.
  ws.attach(node)
  const url = `http://${urlHost(host)}:${await listenOn(node, parsed.port ?? 3000, host)}/mcp`
  process.stderr.write(`rxmcp bridge: ${command} served at ${url} (Streamable HTTP), ${url.replace(/\/mcp$/, '/sse')} (SSE), ${url.replace(/^http/, 'ws')} (WebSocket)\n`)
  await new Promise<void>(resolve => {
    process.once('SIGINT', resolve)
    process.once('SIGTERM', resolve)
  })
  process.stderr.write('rxmcp bridge: shutting down\n')
  // A second signal means now: children are in process groups of their own and get SIGKILL.
  const now = () => { killAll(); process.exit(1) }
  process.once('SIGINT', now)
  process.once('SIGTERM', now)
  await running.close()
  await shared?.close()
  await closeServer(node)
  return 0
}

/** The host commands' flags (`--config` given), or undefined for the other commands. */
function parseHostFlags(argv: string[]): HostFlags | undefined {
  const [command, ...rest] = argv
  if ((command !== 'gateway' && command !== 'inspect' && command !== 'chat') || !rest.includes('--config')) return undefined
  const flags: HostFlags = { config: '', isJson: false, waitMs: 15_000, exposure: exposureFlags() }
  for (let i = 0; i < rest.length; i++) {
    const arg = rest[i]!
    const value = () => { const next = rest[++i]; if (next === undefined) throw new UsageError(`${arg} needs a value`); return next }
    const last = command === 'gateway' ? parseExposureFlag(rest, i, flags.exposure, message => new UsageError(message)) : undefined
    if (last !== undefined) i = last
    else if (arg === '--config') flags.config = value()
    else if (arg === '--port' && command === 'gateway') {
      flags.port = Number(value())
      if (!Number.isInteger(flags.port) || flags.port < 0 || flags.port > 65535) throw new UsageError('--port needs a port number')
    } else if (arg === '--audit-log' && command === 'gateway') flags.auditLog = value()
    else if (arg === '--per-session' && command === 'gateway') flags.isPerSession = true
    else if (arg === '--json' && command === 'inspect') flags.isJson = true
    else if (arg === '--ui' && command === 'inspect') flags.isUi = true
    else if (arg === '--no-open' && command === 'inspect') flags.isNoOpen = true
    else if (arg === '--port' && command === 'inspect') {
      flags.port = Number(value())
      if (!Number.isInteger(flags.port) || flags.port < 0 || flags.port > 65535) throw new UsageError('--port needs a port number')
    }
    else if (arg === '--model' && command === 'chat') flags.model = value()
    else if (arg === '--base-url' && command === 'chat') flags.baseUrl = value()
    else if (arg === '--system' && command === 'chat') flags.system = value()
    else if (arg === '--wait-ms' && command === 'inspect') {
      flags.waitMs = Number(value())
      if (!Number.isFinite(flags.waitMs) || flags.waitMs < 0) throw new UsageError('--wait-ms needs a number of milliseconds')
    } else throw new UsageError(`Unknown option for ${command}: ${arg}`)
  }
  if (command === 'inspect' && !flags.isUi && (flags.port !== undefined || flags.isNoOpen === true)) throw new UsageError('--port and --no-open are for inspect --ui')
  if (command === 'chat' && flags.model === undefined) throw new UsageError('chat needs --model provider:model')
  if (command === 'gateway' && flags.port === undefined && JSON.stringify(flags.exposure) !== JSON.stringify(exposureFlags())) throw new UsageError('--host and the other listen options need --port (without it the gateway speaks stdio)')
  return flags
}

/** Runs one `rxmcp` command line (the arguments after the program's name); resolves to the exit code. */
export async function cli(argv: string[]): Promise<number> {
  let hostFlags: HostFlags | undefined
  try {
    hostFlags = parseHostFlags(argv)
  } catch (error) {
    process.stderr.write(`rxmcp: ${(error as Error).message}\n\n${USAGE}\n`)
    return 2
  }
  if (hostFlags !== undefined) {
    try {
      if (argv[0] === 'chat') return await chat({ config: hostFlags.config, model: hostFlags.model!, baseUrl: hostFlags.baseUrl, system: hostFlags.system })
      if (argv[0] === 'inspect' && hostFlags.isUi === true) return await inspectUiHost(hostFlags)
      if (argv[0] !== 'gateway') return await inspectHost(hostFlags)
      // Without --port the gateway speaks stdio: stdout is the protocol's.
      return await withTelemetry(isTelemetry => serveGateway({ ...hostFlags!, telemetry: isTelemetry }), hostFlags.port === undefined)
    } catch (error) {
      if (error instanceof ExposureError) { process.stderr.write(`rxmcp: ${error.message}\n`); return 2 }
      process.stderr.write(`rxmcp: ${(error as Error).message}\n`)
      return 1
    }
  }
  let parsed: Parsed
  try {
    parsed = parse(argv)
  } catch (error) {
    process.stderr.write(`rxmcp: ${(error as Error).message}\n\n${USAGE}\n`)
    return 2
  }
  if (parsed.command === 'help') { process.stdout.write(USAGE + '\n'); return 0 }
  try {
    if (parsed.command === 'bridge') return await withTelemetry(isTelemetry => serveBridge(parsed, isTelemetry))
    if (parsed.command === 'inspect' && parsed.isUi === true) return await inspectUi(parsed)
    return parsed.command === 'inspect' ? await inspect(parsed) : await call(parsed)
  } catch (error) {
    if (error instanceof ExposureError) { process.stderr.write(`rxmcp: ${error.message}\n`); return 2 }
    if (error instanceof UsageError) { process.stderr.write(`rxmcp: ${error.message}\n\n${USAGE}\n`); return 2 }
    const code = (error as { code?: unknown }).code
    process.stderr.write(`rxmcp: ${(error as Error).message}${code !== undefined ? ` (${code})` : ''}\n`)
    return 1
  } finally {
    await closeAuth()
  }
}

/**
 * Runs a serving command with the OpenTelemetry SDK started first when the OTEL_* variables ask for
 * telemetry (see otel.ts), and shut down after it, so the spans of its last requests are exported.
 */
async function withTelemetry(serve: (isTelemetry: boolean) => Promise<number>, isStdoutProtocol = false): Promise<number> {
  let sdk: OtelSdk | undefined
  if (isTelemetryAsked()) {
    try {
      sdk = await startOtel(isStdoutProtocol)
    } catch (error) {
      process.stderr.write(`rxmcp: ${(error as Error).message}\n`)
      return 1
    }
  }
  try {
    return await serve(sdk !== undefined)
  } finally {
    await sdk?.shutdown()
  }
}
