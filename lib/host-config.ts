/**
 * The host's configuration in the `mcpServers` format desktop hosts use, checked and normalized:
 * pure (the environment for `${VAR}` comes in as an argument), so it runs the same in the CLI, a
 * test and an application.
 *
 * ```json
 * { "mcpServers": {
 *     "files": { "command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "${HOME}/notes"], "roots": ["${HOME}/notes"] },
 *     "search": { "url": "https://search.example.com/mcp", "headers": { "Authorization": "Bearer ${SEARCH_TOKEN}" }, "tools": { "deny": ["delete_index"] } },
 *     "old": { "type": "sse", "url": "http://127.0.0.1:9000/sse", "disabled": true } } }
 * ```
 */

/** How a server is reached. */
export type ServerTransportKind = 'stdio' | 'http' | 'sse' | 'ws'

/** One server's entry, checked: every `${VAR}` expanded, defaults filled in. */
export interface HostServerConfig {
  readonly name: string
  readonly type: ServerTransportKind
  /** stdio: the program and its arguments, environment and working directory. */
  readonly command?: string
  readonly args: readonly string[]
  readonly env: Readonly<Record<string, string>>
  readonly cwd?: string
  /** http, sse, ws: the URL and extra headers. */
  readonly url?: string
  readonly headers: Readonly<Record<string, string>>
  /** Left out of the host (not started). */
  readonly disabled: boolean
  /** Ms a request to this server may take (default: the client's). */
  readonly timeout?: number
  /** Tools offered from this server: only these (when given), never these. */
  readonly allowTools?: readonly string[]
  readonly denyTools: readonly string[]
  /** Directories this server may see as roots (absolute paths). */
  readonly roots: readonly string[]
  /** http, sse, ws: OAuth at this server (see {@link ServerOAuthConfig}); static `headers` are sent besides. */
  readonly oauth?: ServerOAuthConfig
}

/**
 * How the host authorizes at a server reached at a URL, through `oauthFetch` of rxmcp/auth/client:
 * the client credentials grant with a pre-registered client (`issuer`, `clientId`, `clientSecret`,
 * optional `scope`), or tokens stored before (`tokenStore`: a token file such as `rxmcp call`
 * writes; refreshed when they expire, never a login in a browser). The host's own credentials,
 * never those of a gateway's caller.
 */
export type ServerOAuthConfig =
  | { readonly grant: 'client_credentials'; readonly issuer: string; readonly clientId: string; readonly clientSecret: string; readonly scope?: string; readonly tokenStore?: string }
  | { readonly grant: 'stored'; readonly tokenStore: string; readonly issuer?: string; readonly clientId?: string; readonly clientSecret?: string; readonly scope?: string }

/** The checked configuration: servers by name, in the order given. */
export interface HostConfig {
  readonly servers: ReadonlyMap<string, HostServerConfig>
  /**
   * Every value a `${VAR}` expanded to, and the variable it came from, so that what is printed
   * about the configuration (a command line, a URL, a child's stderr) can hide it: see
   * {@link redactExpansions}. Filled by {@link parseHostConfig}.
   */
  readonly expansions?: ReadonlyMap<string, string>
}

/**
 * Expanded values shorter than this are not redacted: replacing every `1` or `on` in a report would
 * garble it and hide nothing worth hiding.
 */
export const MIN_REDACTED_LENGTH = 4

/** A configuration with errors: each names the server and the field. */
export class HostConfigError extends Error {
  override name = 'HostConfigError'
  constructor(readonly problems: readonly string[]) {
    super(`Invalid mcpServers configuration:\n${problems.map(problem => `  - ${problem}`).join('\n')}`)
  }
}

/** Server names: they become tool-name prefixes, so letters, digits, `_` and `-`, at most 32. */
const SERVER_NAME = /^[A-Za-z0-9_-]{1,32}$/
const KNOWN_FIELDS = new Set(['type', 'command', 'args', 'env', 'cwd', 'url', 'headers', 'disabled', 'timeout', 'tools', 'roots', 'oauth'])

/**
 * Checks and normalizes a parsed `mcpServers` document. `env` is where `${VAR}` values come from
 * (an unset variable is an error naming it; `$${` writes a literal `${`). Throws
 * {@link HostConfigError} listing every problem found, not only the first.
 */
export function parseHostConfig(document: unknown, env: Readonly<Record<string, string | undefined>> = {}): HostConfig {
  const problems: string[] = []
  const servers = new Map<string, HostServerConfig>()
  // value -> variable, for redaction; the first variable that gave a value names it.
  const expansions = new Map<string, string>()
  const found = (variable: string, value: string) => { if (!expansions.has(value)) expansions.set(value, variable) }
  if (!isObject(document) || !isObject(document.mcpServers)) throw new HostConfigError(['the document needs an "mcpServers" object'])
  for (const [name, raw] of Object.entries(document.mcpServers)) {
    const at = (field: string) => `mcpServers.${name}${field === '' ? '' : `.${field}`}`
    if (!SERVER_NAME.test(name)) problems.push(`${at('')}: a server name is 1 to 32 letters, digits, "_" or "-"`)
    if (!isObject(raw)) { problems.push(`${at('')}: must be an object`); continue }
    for (const field of Object.keys(raw)) if (!KNOWN_FIELDS.has(field)) problems.push(`${at(field)}: unknown field`)
    const expand = (value: unknown, field: string): string | undefined => {
      if (typeof value !== 'string') { problems.push(`${at(field)}: must be a string`); return undefined }
      return expandVariables(value, env, variable => problems.push(`${at(field)}: \${${variable}} is not set`), found)
    }
    const strings = (value: unknown, field: string): string[] => {
      if (value === undefined) return []
      if (!Array.isArray(value)) { problems.push(`${at(field)}: must be an array of strings`); return [] }
      return value.map((item, index) => expand(item, `${field}[${index}]`) ?? '')
    }
    const record = (value: unknown, field: string): Record<string, string> => {
      if (value === undefined) return {}
      if (!isObject(value)) { problems.push(`${at(field)}: must be an object of strings`); return {} }
      return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, expand(item, `${field}.${key}`) ?? '']))
    }
    const declared = raw.type
    if (declared !== undefined && !['stdio', 'http', 'streamable-http', 'sse', 'ws', 'websocket'].includes(declared as string)) {
      problems.push(`${at('type')}: must be stdio, http, sse or ws`)
    }
    const url = raw.url === undefined ? undefined : expand(raw.url, 'url')
    const command = raw.command === undefined ? undefined : expand(raw.command, 'command')
    const type = kindOf(declared, url, command)
    if (type === 'stdio' && command === undefined) problems.push(`${at('command')}: a stdio server needs a command`)
    if (type !== 'stdio') {
      if (url === undefined) problems.push(`${at('url')}: a ${type} server needs a url`)
      else if (!isUrlFor(type, url)) problems.push(`${at('url')}: ${JSON.stringify(url)} is not a ${type === 'ws' ? 'ws(s)' : 'http(s)'} URL`)
    }
    if (raw.disabled !== undefined && typeof raw.disabled !== 'boolean') problems.push(`${at('disabled')}: must be true or false`)
    if (raw.timeout !== undefined && !(typeof raw.timeout === 'number' && Number.isFinite(raw.timeout) && raw.timeout > 0)) problems.push(`${at('timeout')}: must be a positive number of ms`)
    let allowTools: string[] | undefined
    let denyTools: string[] = []
    if (raw.tools !== undefined) {
      if (!isObject(raw.tools)) problems.push(`${at('tools')}: must be an object with allow and/or deny lists`)
      else {
        for (const key of Object.keys(raw.tools)) if (key !== 'allow' && key !== 'deny') problems.push(`${at(`tools.${key}`)}: unknown field (allow, deny)`)
        allowTools = raw.tools.allow === undefined ? undefined : strings(raw.tools.allow, 'tools.allow')
        denyTools = strings(raw.tools.deny, 'tools.deny')
      }
    }
    const roots = strings(raw.roots, 'roots')
    roots.forEach((root, index) => { if (!root.startsWith('/') && !/^[A-Za-z]:[\\/]/.test(root)) problems.push(`${at(`roots[${index}]`)}: must be an absolute path`) })
    const cwd = raw.cwd === undefined ? undefined : expand(raw.cwd, 'cwd')
    const oauth = raw.oauth === undefined ? undefined : parseOAuth(raw.oauth, type, at, expand, problems)
    servers.set(name, {
      name, type, command, args: strings(raw.args, 'args'), env: record(raw.env, 'env'), cwd,
      url, headers: record(raw.headers, 'headers'), disabled: raw.disabled === true,
      timeout: typeof raw.timeout === 'number' ? raw.timeout : undefined,
      allowTools, denyTools, roots, ...(oauth === undefined ? {} : { oauth }),
    })
  }
  if (problems.length > 0) throw new HostConfigError(problems)
  return { servers, expansions }
}

/**
 * `text` with every value a `${VAR}` of `config` expanded to written back as `${VAR}` (also in its
 * URL-encoded form), longest first, so that a report, a log line or a child's stderr shows where a
 * secret goes without showing the secret. Values shorter than {@link MIN_REDACTED_LENGTH} stay.
 */
export function redactExpansions(text: string, config: HostConfig): string {
  let redacted = text
  for (const [value, variable] of redactions(config)) if (redacted.includes(value)) redacted = redacted.split(value).join(variable)
  return redacted
}

/** The (value, `${VAR}`) pairs to replace, longest value first; cached per configuration. */
function redactions(config: HostConfig): readonly (readonly [string, string])[] {
  let pairs = REDACTIONS.get(config)
  if (pairs !== undefined) return pairs
  const all = new Map<string, string>()
  for (const [value, variable] of config.expansions ?? []) {
    if (value.length < MIN_REDACTED_LENGTH) continue
    for (const form of new Set([value, encodeURIComponent(value), encodeURI(value)])) if (!all.has(form)) all.set(form, `\${${variable}}`)
  }
  pairs = [...all].sort((a, b) => b[0].length - a[0].length)
  REDACTIONS.set(config, pairs)
  return pairs
}

const REDACTIONS = new WeakMap<HostConfig, readonly (readonly [string, string])[]>()

/** What changed between two configurations: servers to start, to stop, to restart; the rest keep running. */
export interface HostConfigChange {
  readonly added: readonly string[]
  readonly removed: readonly string[]
  readonly changed: readonly string[]
}

/** Compares two configurations server by server (a disabled server counts as absent). */
export function diffHostConfig(before: HostConfig, after: HostConfig): HostConfigChange {
  const live = (config: HostConfig) => new Map([...config.servers].filter(([, server]) => !server.disabled))
  const old = live(before)
  const next = live(after)
  return {
    added: [...next.keys()].filter(name => !old.has(name)),
    removed: [...old.keys()].filter(name => !next.has(name)),
    changed: [...next.keys()].filter(name => old.has(name) && JSON.stringify(old.get(name)) !== JSON.stringify(next.get(name))),
  }
}

/**
 * `${VAR}` replaced from `env`; `$${` is a literal `${`; `missing` hears of each unset variable and
 * `found` of each variable expanded, with its value.
 */
export function expandVariables(text: string, env: Readonly<Record<string, string | undefined>>, missing: (variable: string) => void, found?: (variable: string, value: string) => void): string {
  return text.replace(/\$?\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g, (match, variable: string) => {
    if (match.startsWith('$$')) return match.slice(1)
    const value = env[variable]
    if (value === undefined) { missing(variable); return '' }
    found?.(variable, value)
    return value
  })
}

/** A server's `oauth` field, checked (see {@link ServerOAuthConfig}). */
function parseOAuth(raw: unknown, type: ServerTransportKind, at: (field: string) => string, expand: (value: unknown, field: string) => string | undefined, problems: string[]): ServerOAuthConfig | undefined {
  if (type === 'stdio') { problems.push(`${at('oauth')}: OAuth is for servers reached at a URL (a stdio server gets its credentials in env)`); return undefined }
  if (!isObject(raw)) { problems.push(`${at('oauth')}: must be an object`); return undefined }
  const fields = ['grant', 'issuer', 'clientId', 'clientSecret', 'scope', 'tokenStore']
  for (const key of Object.keys(raw)) if (!fields.includes(key)) problems.push(`${at(`oauth.${key}`)}: unknown field (${fields.join(', ')})`)
  const optional = (field: string) => raw[field] === undefined ? undefined : expand(raw[field], `oauth.${field}`)
  const [issuer, clientId, clientSecret, scope, tokenStore] = ['issuer', 'clientId', 'clientSecret', 'scope', 'tokenStore'].map(optional)
  const grant = raw.grant ?? (clientSecret !== undefined ? 'client_credentials' : 'stored')
  if (grant === 'client_credentials') {
    for (const [field, value] of [['issuer', issuer], ['clientId', clientId], ['clientSecret', clientSecret]] as const) if (value === undefined) problems.push(`${at(`oauth.${field}`)}: the client_credentials grant needs it`)
    if (issuer !== undefined && !/^https?:\/\//.test(issuer)) problems.push(`${at('oauth.issuer')}: must be an http(s) URL`)
    return { grant, issuer: issuer ?? '', clientId: clientId ?? '', clientSecret: clientSecret ?? '', ...(scope === undefined ? {} : { scope }), ...(tokenStore === undefined ? {} : { tokenStore }) }
  }
  if (grant === 'stored') {
    if (tokenStore === undefined) problems.push(`${at('oauth.tokenStore')}: stored tokens need the token file's path`)
    return { grant, tokenStore: tokenStore ?? '', ...(issuer === undefined ? {} : { issuer }), ...(clientId === undefined ? {} : { clientId }), ...(clientSecret === undefined ? {} : { clientSecret }), ...(scope === undefined ? {} : { scope }) }
  }
  problems.push(`${at('oauth.grant')}: must be client_credentials or stored`)
  return undefined
}

function kindOf(declared: unknown, url: string | undefined, command: string | undefined): ServerTransportKind {
  if (declared === 'sse') return 'sse'
  if (declared === 'ws' || declared === 'websocket') return 'ws'
  if (declared === 'http' || declared === 'streamable-http') return 'http'
  if (declared === 'stdio' || command !== undefined) return 'stdio'
  return url !== undefined && /^wss?:/i.test(url) ? 'ws' : url !== undefined ? 'http' : 'stdio'
}

function isUrlFor(type: ServerTransportKind, url: string): boolean {
  try {
    const protocol = new URL(url).protocol
    return type === 'ws' ? protocol === 'ws:' || protocol === 'wss:' : protocol === 'http:' || protocol === 'https:'
  } catch { return false }
}

function isObject(value: unknown): value is Record<string, any> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}
