/**
 * The host's commands of the `rxmcp` CLI, each on an `mcpServers` config file:
 *
 *   rxmcp gateway --config mcp.json [--port 3000] [--host 127.0.0.1] [--per-session]   the aggregated view as one server
 *                 [--allowed-host NAME]... [--auth-token-file FILE | --auth-issuer ... | --allow-unauthenticated]
 *                 the config's "gateway" section: auth, policy, rateLimit, audit, health (lib/gateway-config.ts)
 *   rxmcp inspect --config mcp.json [--json] [--wait-ms 15000]         every server's state and the view
 *
 * The gateway speaks stdio without --port, else Streamable HTTP (/mcp), legacy SSE (/sse) and
 * WebSocket (/mcp) on one port, under the listening rule of exposure.ts (beyond loopback: refused
 * without authentication or --allow-unauthenticated, a warning, the Host allow-list). The config
 * file is watched: a change is applied as a reload.
 */
import { readFileSync, watch, type FSWatcher } from 'node:fs'
import { createServer as createHttpServer } from 'node:http'
import { filter, firstValueFrom, race, timer, map } from '../lib/rx.ts'
import { parseHostConfig, redactExpansions, type HostConfig } from '../lib/host-config.ts'
import { DEFAULT_REDACTED_KEYS, parseGatewayConfig, type GatewayConfig } from '../lib/gateway-config.ts'
import { gatewayProduct, healthEndpoint } from '../host/gateway-product.ts'
import { createHost, type Host } from '../host/host.ts'
import { hostServer } from '../host/gateway.ts'
import type { ServerState } from '../host/supervisor.ts'
import { stdio } from '../transports/stdio.ts'
import { streamableHttp } from '../transports/streamable-http.ts'
import { websocket } from '../transports/websocket.ts'
import { closeServer, listenOn, urlHost } from '../transports/listen.ts'
import { exposure, refuseCrossSite, type ExposureFlags } from './exposure.ts'

/** Flags of the host commands. */
export interface HostFlags {
  config: string
  /** inspect --ui --config: the web inspector, a page per server; --no-open: print the URL only. */
  isUi?: boolean
  isNoOpen?: boolean
  port?: number
  /** gateway with --port: who may reach the listener. */
  exposure: ExposureFlags
  isJson: boolean
  waitMs: number
  /** chat: the model (`provider:model`), a base URL, a system prompt. */
  model?: string
  baseUrl?: string
  system?: string
  /** gateway: `--audit-log FILE` (`-` = stderr): the audit log goes there, over the config's `gateway.audit.file`. */
  auditLog?: string
  /**
   * gateway --per-session: each gateway session gets its own client per server (its roots,
   * sampling and elicitation that session's; GatewayOptions.mode 'session'), over the config's `gateway.mode`.
   */
  isPerSession?: boolean
  /** gateway: telemetry on (the OpenTelemetry SDK started from the OTEL_* variables): its server and its clients make spans and metrics. */
  telemetry?: boolean
}

/** The parsed JSON of a config file; errors name the file. */
function readDocument(path: string): unknown {
  let text: string
  try { text = readFileSync(path, 'utf8') } catch (error) { throw new Error(`cannot read ${path}: ${(error as Error).message}`) }
  try { return JSON.parse(text) } catch (error) { throw new Error(`${path} is not JSON: ${(error as Error).message}`) }
}

/**
 * Reads and checks the config file's `gateway` section (auth, policy, rateLimit, audit, health),
 * with the `${VAR}` values it expanded (for redaction); errors name the file and the field.
 */
export function loadGatewayConfig(path: string): { gateway: GatewayConfig; expansions: ReadonlyMap<string, string> } {
  const expansions = new Map<string, string>()
  const { config, problems } = parseGatewayConfig(readDocument(path), process.env, (variable, value) => { if (!expansions.has(value)) expansions.set(value, variable) })
  if (problems.length > 0) throw new Error(`${path}: Invalid gateway configuration:\n${problems.map(problem => `  - ${problem}`).join('\n')}`)
  return { gateway: config, expansions }
}

/** Reads and checks the config file; errors name the file, the server and the field. */
export function loadConfig(path: string): HostConfig {
  const document = readDocument(path)
  try {
    return parseHostConfig(document, process.env)
  } catch (error) {
    throw new Error(`${path}: ${(error as Error).message}`)
  }
}

/** Resolves once every server is ready or failed, or after `ms`. */
function settled(host: Host, ms: number): Promise<ReadonlyMap<string, ServerState>> {
  const isSettled = (states: ReadonlyMap<string, ServerState>) => [...states.values()].every(state => state.status === 'ready' || state.status === 'failed')
  return firstValueFrom(race(host.states.pipe(filter(isSettled)), timer(ms).pipe(map(() => host.currentStates()))))
}

/** Every string of a JSON value (keys too) with `${VAR}` values written back as `${VAR}`. */
function redactDeep(value: unknown, config: HostConfig): unknown {
  if (typeof value === 'string') return redactExpansions(value, config)
  if (Array.isArray(value)) return value.map(item => redactDeep(item, config))
  if (typeof value === 'object' && value !== null) return Object.fromEntries(Object.entries(value).map(([key, item]) => [redactExpansions(key, config), redactDeep(item, config)]))
  return value
}

/**
 * `rxmcp inspect --config`: starts the host, waits for the servers to settle, prints, stops. What
 * it prints (states, reasons, children's stderr, tools) shows `${VAR}` values as `${VAR}`: a
 * secret in a command line, an argument, a URL or a header that a child or an error repeats.
 */
export async function inspectHost(flags: HostFlags): Promise<number> {
  const config = loadConfig(flags.config)
  const host = createHost(config, { restart: { retries: 0 } })
  try {
    // A ready server's tools, resources and prompts are listed by then.
    const states = await settled(host, flags.waitMs)
    const report = {
      servers: Object.fromEntries([...states].map(([name, state]) => [name, state])),
      tools: host.currentTools().map(tool => ({ name: tool.name, server: tool.server, description: tool.tool.description })),
      resources: (await firstValueFrom(host.resources)).map(entry => ({ uri: entry.resource.uri, server: entry.server })),
      prompts: (await firstValueFrom(host.prompts)).map(entry => ({ name: entry.name, server: entry.server })),
    }
    if (flags.isJson) {
      process.stdout.write(JSON.stringify(redactDeep(report, config), null, 2) + '\n')
    } else {
      const out = (line = '') => process.stdout.write(redactExpansions(line, config) + '\n')
      out(`Servers (${states.size})`)
      for (const [name, state] of states) {
        const detail = state.status === 'ready' ? `${state.serverInfo.name} ${state.serverInfo.version}` : state.status === 'failed' ? state.reason : ''
        out(`  ${name.padEnd(16)} ${state.status.padEnd(10)} ${detail}`)
        if (state.status === 'failed') for (const line of state.stderr.slice(-5)) out(`      stderr: ${line}`)
      }
      out(`\nTools (${report.tools.length})`)
      for (const tool of report.tools) out(`  ${tool.name}${tool.description ? ` - ${tool.description}` : ''}`)
      out(`\nResources (${report.resources.length})`)
      for (const resource of report.resources) out(`  ${resource.uri} (${resource.server})`)
      out(`\nPrompts (${report.prompts.length})`)
      for (const prompt of report.prompts) out(`  ${prompt.name}`)
    }
    return [...states.values()].some(state => state.status !== 'ready') ? 1 : 0
  } finally {
    await host.close()
  }
}

/** `rxmcp gateway --config`: serves the aggregated view until stdin ends (stdio) or a signal. */
export async function serveGateway(flags: HostFlags): Promise<number> {
  const config = loadConfig(flags.config)
  const { gateway: fromFile, expansions } = loadGatewayConfig(flags.config)
  // --audit-log names the file; what the log shows (arguments, redaction) stays the config's.
  const section: GatewayConfig = flags.auditLog === undefined ? fromFile
    : { ...fromFile, audit: { isArgumentsIncluded: false, redactKeys: DEFAULT_REDACTED_KEYS, redactPatterns: [], ...fromFile.audit, file: flags.auditLog } }
  // Every `${VAR}` value of every configuration applied so far (the gateway section's too): no line this prints shows one.
  let seen: HostConfig = { servers: config.servers, expansions: new Map([...config.expansions ?? [], ...expansions]) }
  const log = (line: string) => process.stderr.write(`rxmcp gateway: ${redactExpansions(line, seen)}\n`)
  const isStdio = flags.port === undefined
  const product = await gatewayProduct(section, { isStdio, secrets: () => seen })
  if (isStdio && section.auth !== undefined) log('gateway.auth applies to the HTTP listener (--port); over stdio the caller is the process that started the gateway')
  // Decided before any server starts: a gateway that may not listen starts nothing.
  const risk = `anyone who can reach it can call every tool of the servers in ${flags.config} with your rights`
  const fromConfig = product.auth === undefined ? undefined : { auth: product.auth, description: `an OAuth access token from ${section.auth!.issuer} for ${section.auth!.resource}` }
  const listening = isStdio ? undefined : await exposure('gateway', flags.exposure, risk, line => process.stderr.write(line + '\n'), fromConfig)
  // One trace runs client -> gateway (SERVER span) -> each server's client (CLIENT span) -> the server.
  const telemetry = flags.telemetry === true ? { telemetry: true } : {}
  // Each server is reached with its own credentials (headers, OAuth), never with a caller's; its
  // client declares sampling, elicitation and roots, so a server asks the gateway's calling client.
  const host = createHost(config, { ...telemetry, start: product.start, gateway: true })
  const mode = flags.isPerSession === true ? 'session' : section.mode ?? 'shared'
  const gateway = hostServer(host, { server: { ...telemetry, ...product.serverOptions }, mode })
  if (product.middleware.length > 0) gateway.server.use(...product.middleware)
  let watcher: FSWatcher | undefined
  try {
    watcher = watch(flags.config, () => {
      try {
        const next = loadConfig(flags.config)
        seen = { servers: next.servers, expansions: new Map([...next.expansions ?? [], ...seen.expansions ?? []]) }
        void host.reload(next).catch(error => log(`reload failed: ${(error as Error).message}`))
      } catch (error) {
        log(`config not applied: ${(error as Error).message}`)
      }
    })
  } catch { /* a file that cannot be watched is read once */ }
  host.states.subscribe(states => {
    for (const [name, state] of states) if (state.status === 'failed') log(`${name} failed: ${state.reason}`)
  })
  const stopped = new Promise<void>(resolve => {
    process.once('SIGINT', resolve)
    process.once('SIGTERM', resolve)
  })
  let close = async () => {}
  if (listening === undefined) {
    const session = await gateway.server.listen(stdio())
    await Promise.race([session.closed, stopped])
  } else {
    const { host: bind, allowedHosts, allowedOrigins, auth } = listening
    const rateLimit = product.rateLimit === undefined ? {} : { rateLimit: product.rateLimit }
    const http = streamableHttp({ host: bind, allowedHosts, allowedOrigins, auth, ...rateLimit })
    // One budget per principal across both listeners.
    const ws = websocket({ host: bind, allowedHosts, allowedOrigins, auth, ...rateLimit, rateLimiterStore: http.rateLimiterStore })
    const handler = section.healthPath === undefined ? http.nodeHandler
      : healthEndpoint({ path: section.healthPath, boundHost: bind, allowedHosts, allowedOrigins, states: () => host.currentStates() }, http.nodeHandler)
    const node = createHttpServer({ noDelay: true, keepAliveTimeout: 30_000 }, refuseCrossSite(handler))
    ws.attach(node)
    await gateway.server.listen(http)
    await gateway.server.listen(ws)
    const url = `http://${urlHost(bind)}:${await listenOn(node, flags.port!, bind)}/mcp`
    process.stderr.write(`rxmcp gateway: serving ${url} (Streamable HTTP), ${url.replace(/\/mcp$/, '/sse')} (SSE), ${url.replace(/^http/, 'ws')} (WebSocket)\n`)
    close = () => closeServer(node)
    await stopped
    // SIGTERM drains (a rolling restart): /health answers 503, no new session, the requests in
    // flight finish (10 s at most), then the sessions and connections close.
    process.stderr.write('rxmcp gateway: draining\n')
    await gateway.server.drain({ timeoutMs: 10_000 })
  }
  watcher?.close()
  await gateway.close()
  await host.close()
  await close()
  await product.close()
  return 0
}
