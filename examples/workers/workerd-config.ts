/**
 * The workerd configuration (Cap'n Proto text) that runs a bundled Worker the way Cloudflare runs
 * it deployed with the wrangler.toml of README ("Cloudflare Workers"): the modules, a compatibility
 * date, the Durable Object namespaces (McpSession, RequestStateClaim) kept in memory, the
 * bindings, HTTP sockets.
 */

/** The compatibility date the example is written for (workerd and wrangler take it as it is). */
export const COMPATIBILITY_DATE = '2026-11-01'

/** What {@link workerdConfig} writes. */
export interface WorkerdConfigOptions {
  /** The bundle's module files, in the config's directory; the first is the Worker's main module. */
  modules: readonly string[]
  /**
   * `host:port` for each socket, each served by a Worker of its own (an isolate of its own), all
   * with one set of Durable Objects: the first socket is `http`, the others `http-2`, `http-3`...
   * Several stand for what Cloudflare does, serving one Worker from many isolates.
   */
  addresses: readonly string[]
  /** Text bindings (the Worker's `env`): REQUEST_STATE_KEY, ALLOWED_HOSTS. */
  text: Readonly<Record<string, string>>
}

/** A Cap'n Proto text literal (JSON's escapes are Cap'n Proto's for the characters we write). */
const quoted = (text: string) => JSON.stringify(text)

/** The name of the `n`th socket (from 0), as workerd's control messages report it. */
export const socketName = (n: number) => n === 0 ? 'http' : `http-${n + 1}`

/**
 * The config text. Durable Objects are stored in memory (nothing outlives workerd; the example keeps
 * its sessions in the objects' memory anyway), and each namespace's `uniqueKey` derives its ids.
 * @example
 * workerdConfig({ modules: ['worker.js'], addresses: ['127.0.0.1:8787'], text: { REQUEST_STATE_KEY: key } })
 */
export function workerdConfig(options: WorkerdConfigOptions): string {
  const modules = options.modules.map(name => `(name = ${quoted(name)}, esModule = embed ${quoted(name)})`).join(', ')
  const text = Object.entries(options.text).map(([name, value]) => `(name = ${quoted(name)}, text = ${quoted(value)})`)
  const services = options.addresses.map((_, n) => n === 0 ? 'mcp' : `mcp-${n + 1}`)
  // The first service holds the namespaces; the others reach its objects by naming it.
  const namespace = (className: string, n: number) => n === 0 ? quoted(className) : `(className = ${quoted(className)}, serviceName = "mcp")`
  const worker = (n: number) => `(
    modules = [${modules}],
    compatibilityDate = ${quoted(COMPATIBILITY_DATE)},
    bindings = [
      (name = "SESSIONS", durableObjectNamespace = ${namespace('McpSession', n)}),
      (name = "REQUEST_STATES", durableObjectNamespace = ${namespace('RequestStateClaim', n)}),
      ${text.join(',\n      ')}
    ],${n > 0 ? '' : `
    durableObjectNamespaces = [
      (className = "McpSession", uniqueKey = "rxmcp-example-mcp-session"),
      (className = "RequestStateClaim", uniqueKey = "rxmcp-example-request-state-claim"),
    ],
    durableObjectStorage = (inMemory = void),`}
  )`
  return `using Workerd = import "/workerd/workerd.capnp";

const config :Workerd.Config = (
  services = [
    ${services.map((name, n) => `(name = ${quoted(name)}, worker = ${worker(n)})`).join(',\n    ')}
  ],
  sockets = [
    ${options.addresses.map((address, n) => `(name = ${quoted(socketName(n))}, address = ${quoted(address)}, http = (), service = ${quoted(services[n]!)})`).join(',\n    ')}
  ],
);
`
}
