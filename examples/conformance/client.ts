/**
 * The client the official conformance suites drive: `client.ts <server-url>`, with the scenario
 * in MCP_CONFORMANCE_SCENARIO (and, for some, its inputs in MCP_CONFORMANCE_CONTEXT). Exits 0
 * when the scenario's steps completed.
 *
 * The client runs with `era: 'auto'` for every scenario, legacy (0.1.16, and the 2025-11-25 ones
 * of 0.2.0) or modern (2026-07-28): it probes with server/discover and falls back to initialize,
 * as a client meeting an unknown server would.
 */
import { lastValueFrom, toArray } from 'rxjs'
import { SkillVerificationError } from '../../lib/skills.ts'
import { connect, type ClientOptions, type McpClient } from '../../actors/client.ts'
import { streamableHttpClient } from '../../transports/http-client.ts'
import { AuthorizationError, enterpriseGrant, headlessRedirect, oauthFetch, type OAuthFetchOptions } from '../../auth/client.ts'
import { authChallenge } from '../../lib/www-authenticate.ts'
import type { Tool } from '../../lib/schema/types.ts'

const url = process.argv[2]
const scenario = process.env.MCP_CONFORMANCE_SCENARIO ?? 'initialize'
if (url === undefined) {
  process.stderr.write('usage: client.ts <server-url>\n')
  process.exit(2)
}

/** Inputs some scenarios hand the client (the tool calls of http-custom-headers). */
const context = parseContext(process.env.MCP_CONFORMANCE_CONTEXT)

const options: ClientOptions = {
  // SEP-1034: accept with nothing filled in; the client fills the schema's defaults.
  elicitation: { form: () => ({ action: 'accept', content: {} }) },
  sampling: () => ({ role: 'assistant', model: 'conformance-model', content: { type: 'text', text: 'sampled' } }),
  roots: [],
  // Tools with invalid x-mcp-header annotations are left out of the list; say so on stderr.
  reportUnhandledError: error => process.stderr.write(`warning: ${error instanceof Error ? error.message : String(error)}\n`),
}

/** Auth scenarios whose server misbehaves: the client passes by refusing (AuthorizationError) and exits 0. */
const REFUSING_SCENARIOS = new Set([
  'auth/resource-mismatch', 'auth/metadata-issuer-mismatch', 'auth/iss-supported-missing', 'auth/iss-wrong-issuer',
  'auth/iss-unexpected', 'auth/iss-normalized', 'auth/scope-retry-limit',
])

if (scenario.startsWith('auth/')) await runAuthScenario(url)
else await runScenario(url)

/** A scenario without authorization: connect, then the scenario's steps. */
async function runScenario(url: string): Promise<void> {
  const client = await connect(streamableHttpClient(url), { name: 'rxmcp-conformance-client', version: '0.1.0' }, options)
  try {
    const capabilities = client.serverCapabilities
    // Only what a server declared is asked for (the initialize scenario's server declares nothing).
    const tools = capabilities.tools === undefined ? [] : await lastValueFrom(client.tools().pipe(toArray()))
    switch (scenario) {
      case 'tools_call':
        for (const tool of tools) if (tool.name === 'add_numbers') await client.callTool('add_numbers', { a: 5, b: 3 })
        break
      case 'elicitation-sep1034-client-defaults':
        await client.callTool('test_client_elicitation_defaults', {})
        break
      case 'sse-retry':
        await client.callTool('test_reconnection', {})
        break
      case 'sep-2322-client-request-state':
        await client.callTool('test_mrtr_echo_state', {})
        await client.callTool('test_mrtr_no_state', {})
        await client.callTool('test_mrtr_unrelated', {})
        await client.callTool('test_mrtr_no_result_type', {})
        break
      case 'http-standard-headers':
        await exerciseEverything(client, tools)
        break
      case 'http-custom-headers':
        for (const call of context.toolCalls ?? []) await client.callTool(call.name, call.arguments)
        break
      case 'http-invalid-tool-headers':
        // Every tool that survived the list is called; the invalid ones never are.
        for (const tool of tools) await client.callTool(tool.name, sampleArguments(tool))
        break
      case 'sep-2640-client-no-prefetch':
        // Listing reads no skill file: the skill is loaded only when asked, and nothing asks here.
        await client.skills.list()
        break
      case 'sep-2640-client-verify-digest':
      case 'sep-2640-client-verify-size':
      case 'sep-2640-client-verify-frontmatter': {
        // The served SKILL.md does not match its entry: loading must refuse it and read nothing more.
        const [skill] = await client.skills.list()
        if (skill !== undefined) {
          const refusal = await client.skills.load(skill).then(() => undefined, (error: unknown) => error)
          if (!(refusal instanceof SkillVerificationError)) throw new Error(`the tampered skill was not refused: ${String(refusal)}`)
          process.stderr.write(`refused as expected: ${refusal.message}\n`)
        }
        break
      }
      case 'json-schema-2020-12-preservation': {
        const focal = tools.find(tool => tool.name === 'json_schema_2020_12_tool')
        if (focal !== undefined) await client.callTool('json_schema_echo', { schema: focal.inputSchema })
        break
      }
    }
  } finally {
    await client.close()
}
}

/** Calls every tool, reads every resource and gets every prompt the server offers. */
async function exerciseEverything(client: McpClient, tools: Tool[]): Promise<void> {
  for (const tool of tools) await client.callTool(tool.name, sampleArguments(tool))
  if (client.serverCapabilities.resources !== undefined) {
    for (const resource of await lastValueFrom(client.resources().pipe(toArray()))) await client.readResource(resource.uri)
  }
  if (client.serverCapabilities.prompts !== undefined) {
    for (const prompt of await lastValueFrom(client.prompts().pipe(toArray()))) await client.getPrompt(prompt.name)
  }
}

/** Arguments that satisfy a tool's required string, number and boolean properties. */
function sampleArguments(tool: Tool): Record<string, unknown> {
  const schema = tool.inputSchema as { properties?: Record<string, { type?: string }>; required?: string[] }
  const args: Record<string, unknown> = {}
  for (const name of schema.required ?? []) {
    const type = schema.properties?.[name]?.type
    args[name] = type === 'integer' || type === 'number' ? 1 : type === 'boolean' ? true : type === 'object' ? {} : type === 'array' ? [] : 'sample'
  }
  return args
}

/** The auth scenarios' inputs (MCP_CONFORMANCE_CONTEXT): pre-registered credentials, keys, assertions. */
interface Context {
  toolCalls?: { name: string; arguments?: Record<string, unknown> }[]
  client_id?: string
  client_secret?: string
  private_key_pem?: string
  signing_algorithm?: string
  valid_jwt?: string
  idp_client_id?: string
  idp_id_token?: string
  idp_token_endpoint?: string
}

/**
 * The authorization server the scenario's MCP server names: the first of its Protected Resource
 * Metadata (at the URL its 401 challenge names, else the well-known ones), else (MCP 2025-03-26)
 * its origin. Trusting the server for it is what a conformance client may do and an application
 * must not: an application states the issuer its credentials came with.
 */
async function scenarioIssuer(serverUrl: string): Promise<string> {
  const server = new URL(serverUrl)
  const probe = await fetch(server, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body: '{}' })
  void probe.body?.cancel()
  const named = authChallenge(probe.headers.get('www-authenticate'))?.params.resource_metadata
  const candidates = [
    ...(named === undefined ? [] : [new URL(named, server)]),
    new URL(`/.well-known/oauth-protected-resource${server.pathname.replace(/\/$/, '')}`, server),
    new URL('/.well-known/oauth-protected-resource', server),
  ]
  for (const candidate of candidates) {
    const response = await fetch(candidate, { headers: { accept: 'application/json' } })
    if (!response.ok) { void response.body?.cancel(); continue }
    const servers = (await response.json() as { authorization_servers?: unknown }).authorization_servers
    if (Array.isArray(servers) && typeof servers[0] === 'string') return servers[0]
  }
  return server.origin
}

function parseContext(text: string | undefined): Context {
  if (text === undefined) return {}
  try {
    const value = JSON.parse(text) as unknown
    return typeof value === 'object' && value !== null ? value as Context : {}
  } catch {
    return {}
  }
}


/**
 * An auth scenario: the client behind oauthFetch connects, lists tools and calls `test-tool` when
 * listed. The scenario's inputs pick the grant and the client credentials.
 */
async function runAuthScenario(url: string): Promise<void> {
  const auth: OAuthFetchOptions = {
    redirect: headlessRedirect(),
    redirectUri: 'http://localhost:3000/callback',
    clientMetadataUrl: 'https://conformance-test.local/client-metadata.json',
    clientMetadata: { client_name: 'rxmcp-conformance-client' },
  }
  if (context.client_id !== undefined) auth.clientId = context.client_id
  if (context.client_secret !== undefined) auth.clientSecret = context.client_secret
  if (context.private_key_pem !== undefined) {
    auth.privateKey = context.private_key_pem
    auth.signingAlgorithm = context.signing_algorithm ?? 'ES256'
  }
  // oauthFetch sends pre-registered credentials only to the issuer they are from. An application
  // knows it from its registration; the scenario hands only the credentials, so the issuer is read
  // from the scenario's Protected Resource Metadata first.
  if (auth.clientId !== undefined && (auth.clientSecret !== undefined || auth.privateKey !== undefined)) auth.issuer = await scenarioIssuer(url)
  if (scenario.startsWith('auth/client-credentials-')) auth.grant = 'client_credentials'
  if (scenario === 'auth/wif-jwt-bearer') {
    const assertion = context.valid_jwt ?? ''
    auth.grant = { type: 'urn:ietf:params:oauth:grant-type:jwt-bearer', parameters: () => ({ assertion }) }
    auth.tokenEndpointAuthMethod = 'none'
  }
  if (context.idp_token_endpoint !== undefined) {
    // SEP-990: the ID token becomes an ID-JAG at the IdP, then a token at the MCP server's AS.
    const idToken = context.idp_id_token ?? ''
    auth.grant = enterpriseGrant({ idpTokenEndpoint: context.idp_token_endpoint, idpClientId: context.idp_client_id ?? '', idToken: () => idToken })
    auth.tokenEndpointAuthMethod = 'client_secret_basic'
  }
  // What the client refused, seen at the fetch: a transport may hide the error behind another (the
  // era probe falls back to initialize, whose next request the scenario's server then fails).
  let refusal: AuthorizationError | undefined
  const authorizedFetch = oauthFetch(auth)
  const watchedFetch: typeof fetch = (input, init) => authorizedFetch(input, init).catch((error: unknown) => {
    if (error instanceof AuthorizationError) refusal ??= error
    throw error
  })
  try {
    const client = await connect(streamableHttpClient(url, { fetch: watchedFetch }), { name: 'rxmcp-conformance-client', version: '0.1.0' }, options)
    try {
      const tools = client.serverCapabilities.tools === undefined ? [] : await lastValueFrom(client.tools().pipe(toArray()))
      if (tools.some(tool => tool.name === 'test-tool')) await client.callTool('test-tool', {})
    } finally {
      await client.close()
    }
  } catch (error) {
    if (!REFUSING_SCENARIOS.has(scenario) || refusal === undefined) throw error
    process.stderr.write(`refused as expected: ${refusal.code}: ${refusal.message}\n`)
  }
}
