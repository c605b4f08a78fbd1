/**
 * Issue 26, the gateway as a product: `rxmcp gateway --config` as a child process, its `gateway`
 * section configuring OAuth at the gateway (tokens from oidc-provider), a policy by scope and
 * subject, a rate limit, an audit log and the health endpoint, in front of an OAuth-protected HTTP
 * server that the gateway reaches with its own client credentials (client_credentials grant).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { spawn, type ChildProcess } from 'node:child_process'
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { ReplaySubject, filter, firstValueFrom, skip } from 'rxjs'
import { decodeJwt } from 'jose'
import { createServer, type McpServer } from '../../actors/server.ts'
import { connect, type ListenEvent, type McpClient } from '../../actors/client.ts'
import { streamableHttp } from '../../transports/streamable-http.ts'
import { stdioClient } from '../../transports/stdio.ts'
import { httpClient } from '../../transports/http-client.ts'
import { bearerAuth } from '../../auth/server.ts'
import { jwtVerifier } from '../../auth/verifiers.ts'
import { McpError } from '../../lib/jsonrpc/errors.ts'
import { fileTokenStore } from '../../auth/client.ts'
import { freePort } from '../auth/fixtures.ts'
import { startAuthorizationServer, type TestAuthorizationServer } from '../auth/oidc.ts'

const root = fileURLToPath(new URL('../..', import.meta.url))
const GATEWAY_SECRET_VARIABLE = 'RXMCP_TEST_GATEWAY_SECRET'

let as: TestAuthorizationServer
let downstream: McpServer
let scratch: string
let gatewayUrl: string
let gateway: ChildProcess
let gatewayExited: Promise<number>
let stderr = ''
let auditPath: string
/** Every token the downstream server was given. */
const downstreamTokens: string[] = []
/** The gateway's own client at the authorization server, and the callers'. */
let gatewayClient: RegisteredClient
let alice: RegisteredClient
let bob: RegisteredClient
let carol: RegisteredClient
/** The client whose tokens are stored in a token file (as `rxmcp call` keeps them). */
let stored: RegisteredClient
let aliceToken: string
let bobToken: string
const clients: McpClient[] = []

interface RegisteredClient { id: string; secret: string }

/** Registers a confidential client for the client credentials grant (DCR at oidc-provider). */
async function register(name: string): Promise<RegisteredClient> {
  const response = await fetch(`${as.issuer}/reg`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ client_name: name, grant_types: ['client_credentials'], response_types: [], redirect_uris: [], token_endpoint_auth_method: 'client_secret_basic' }),
  })
  const body = await response.json() as { client_id: string; client_secret: string }
  if (!response.ok) throw new Error(`registration failed: ${JSON.stringify(body)}`)
  return { id: body.client_id, secret: body.client_secret }
}

/** An access token of `client` for `resource` with `scope` (client credentials, RFC 8707 resource). */
async function tokenFor(client: RegisteredClient, resource: string, scope: string): Promise<string> {
  const response = await fetch(`${as.issuer}/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Basic ${btoa(`${encodeURIComponent(client.id)}:${encodeURIComponent(client.secret)}`)}` },
    body: new URLSearchParams({ grant_type: 'client_credentials', scope, resource }).toString(),
  })
  const body = await response.json() as { access_token: string }
  if (!response.ok) throw new Error(`token request failed: ${JSON.stringify(body)}`)
  return body.access_token
}

/** A client of the gateway with `token`, once the `expected` tools are there (it is told list_changed as servers come). */
async function gatewayClientWith(token: string, expected: readonly string[] = ['down__echo']): Promise<{ client: McpClient; tools: string[] }> {
  const client = await connect(httpClient(gatewayUrl, { headers: { authorization: `Bearer ${token}` } }), { name: 'caller', version: '1' }, { era: 'modern' })
  clients.push(client)
  // A listen stream first: once acknowledged, a change of what this principal sees cannot be missed.
  const events = new ReplaySubject<ListenEvent>()
  const listening = client.listen({ toolsListChanged: true }).subscribe(events)
  const notifications = events.pipe(filter(event => event.type === 'notification'))
  try {
    await firstValueFrom(events.pipe(filter(event => event.type === 'acknowledged')))
    for (let waited = 0; ; waited++) {
      const names = (await client.listTools()).tools.map(tool => tool.name).sort()
      if (expected.every(name => names.includes(name))) return { client, tools: names }
      // The next change after those already waited for.
      await firstValueFrom(notifications.pipe(skip(waited)))
    }
  } finally {
    listening.unsubscribe()
  }
}

/** A raw legacy session with `token`: `post(message)` sends one JSON-RPC message in it. */
async function rawSession(token: string): Promise<(message: object) => Promise<Response>> {
  const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: `Bearer ${token}` }
  const init = await fetch(gatewayUrl, { method: 'POST', headers, body: JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } }) })
  await init.text()
  const session = init.headers.get('mcp-session-id')!
  const post = (message: object) => fetch(gatewayUrl, { method: 'POST', headers: { ...headers, 'mcp-session-id': session, 'mcp-protocol-version': '2025-11-25' }, body: JSON.stringify(message) })
  await (await post({ jsonrpc: '2.0', method: 'notifications/initialized' })).text()
  return post
}

beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), 'rxmcp-gateway-product-'))
  as = await startAuthorizationServer({ scopes: 'mcp mcp:admin' })
  ;[gatewayClient, alice, bob, carol, stored] = await Promise.all(['gateway', 'alice', 'bob', 'carol', 'stored'].map(register)) as [RegisteredClient, RegisteredClient, RegisteredClient, RegisteredClient, RegisteredClient]

  // The server behind the gateway: protected, its tokens' audience its own URL.
  const downPort = await freePort()
  const downResource = `http://127.0.0.1:${downPort}/mcp`
  const verifyJwt = jwtVerifier({ issuer: as.issuer, jwksUrl: as.jwksUri })
  downstream = createServer({ name: 'down', version: '1' })
  downstream.tool('whoami', {}, (_args, ctx) => ({ content: [{ type: 'text', text: `${ctx.principal?.subject} ${ctx.principal?.scopes.join(',')}` }] }))
  downstream.tool('echo', { inputSchema: { type: 'object', properties: { text: { type: 'string' }, apiKey: { type: 'string' } } } }, args => ({ content: [{ type: 'text', text: String(args.text) }] }))
  downstream.tool('secret', {}, () => ({ content: [{ type: 'text', text: 'the secret' }] }))
  downstream.tool('delete_all', {}, () => ({ content: [{ type: 'text', text: 'deleted' }] }))
  await downstream.listen(streamableHttp({
    port: downPort,
    auth: bearerAuth({ resource: downResource, authorizationServers: [as.issuer], requiredScopes: ['mcp'], verify: async (token, context) => { downstreamTokens.push(token); return verifyJwt(token, context) } }),
  }))

  // A token for the server behind, stored beforehand in a token file under the server's URL.
  const tokenFile = join(scratch, 'tokens.json')
  await fileTokenStore(tokenFile).set(downResource, { accessToken: await tokenFor(stored, downResource, 'mcp'), tokenType: 'bearer', issuer: as.issuer, clientId: stored.id, expiresAt: Date.now() + 3600_000 })

  const port = await freePort()
  gatewayUrl = `http://127.0.0.1:${port}/mcp`
  auditPath = join(scratch, 'audit.jsonl')
  const config = join(scratch, 'mcp.json')
  await writeFile(config, JSON.stringify({
    mcpServers: {
      down: { url: downResource, oauth: { grant: 'client_credentials', issuer: as.issuer, clientId: gatewayClient.id, clientSecret: `\${${GATEWAY_SECRET_VARIABLE}}`, scope: 'mcp' } },
      stored: { url: downResource, oauth: { tokenStore: tokenFile } },
    },
    gateway: {
      auth: { issuer: as.issuer, resource: gatewayUrl, jwksUrl: as.jwksUri, requiredScopes: ['mcp'], scopes: { 'tools/call:down__delete_all': ['mcp:admin'] } },
      policy: [
        { when: { scopes: ['mcp:admin'] }, allow: ['*'], deny: ['tools:call:stored__delete_all', 'tools:call:stored__secret'] },
        { when: { subjects: [bob.id] }, allow: ['tools:call:down__echo', 'tools:call:down__whoami', 'tools:call:down__delete_all'] },
      ],
      rateLimit: { capacity: 40, refillPerSecond: 0.01 },
      audit: { file: auditPath, arguments: true, redact: { keys: ['apiKey'], patterns: ['sk-[a-z0-9]+'] } },
    },
  }))
  gateway = spawn(process.execPath, ['--import', 'tsx', 'bin/rxmcp.ts', 'gateway', '--config', config, '--port', String(port)], {
    cwd: root, stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, [GATEWAY_SECRET_VARIABLE]: gatewayClient.secret },
  })
  gatewayExited = new Promise(resolve => gateway.once('exit', code => resolve(code ?? 1)))
  await new Promise<void>((resolve, reject) => {
    gateway.stderr!.on('data', chunk => { stderr += chunk; if (stderr.includes('serving http://')) resolve() })
    void gatewayExited.then(code => reject(new Error(`rxmcp gateway exited ${code}: ${stderr}`)))
  })
  aliceToken = await tokenFor(alice, gatewayUrl, 'mcp mcp:admin')
  bobToken = await tokenFor(bob, gatewayUrl, 'mcp')
}, 60_000)

afterAll(async () => {
  for (const client of clients) await client.close().catch(() => {})
  if (gateway?.exitCode === null) { gateway.kill('SIGTERM'); await gatewayExited }
  await downstream?.close()
  await as?.close()
  await rm(scratch, { recursive: true, force: true })
})

describe('rxmcp gateway --config with a gateway section', { timeout: 60_000 }, () => {
  it('refuses a caller without a token (401 with the resource metadata) and serves the Protected Resource Metadata', async () => {
    const refused = await fetch(gatewayUrl, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body: '{"jsonrpc":"2.0","id":1,"method":"ping"}' })
    expect(refused.status).toBe(401)
    expect(refused.headers.get('www-authenticate')).toContain('resource_metadata=')
    const metadata = await (await fetch(new URL('/.well-known/oauth-protected-resource/mcp', gatewayUrl))).json() as { resource: string; authorization_servers: string[] }
    expect(metadata).toMatchObject({ resource: gatewayUrl, authorization_servers: [as.issuer] })
  })

  it('shows two principals the tools their policy gives them, and answers a hidden tool as an unknown one (-32602)', async () => {
    const asAlice = await gatewayClientWith(aliceToken, ['down__echo', 'stored__echo'])
    const asBob = await gatewayClientWith(bobToken)
    expect(asAlice.tools).toEqual(['down__delete_all', 'down__echo', 'down__secret', 'down__whoami', 'stored__echo', 'stored__whoami'])
    expect(asBob.tools).toEqual(['down__delete_all', 'down__echo', 'down__whoami'])
    expect(((await asAlice.client.callTool('down__secret', {})).content[0] as { text: string }).text).toBe('the secret')
    const refused = await asBob.client.callTool('down__secret', {}).catch((error: unknown) => error)
    expect(refused).toBeInstanceOf(McpError)
    expect((refused as McpError).code).toBe(-32602)
    expect((refused as McpError).message).toContain('unknown tool')
  })

  it('answers a call its token lacks the scope for with 403 insufficient_scope (step-up), before it reaches the policy', async () => {
    const post = await rawSession(bobToken)
    const response = await post({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'down__delete_all', arguments: {} } })
    expect(response.status).toBe(403)
    expect(response.headers.get('www-authenticate')).toMatch(/error="insufficient_scope".*scope="[^"]*mcp:admin/)
    await response.text()
  })

  it('reaches the server behind with the gateway\'s own client-credentials token, never the caller\'s', async () => {
    const { client } = await gatewayClientWith(aliceToken)
    const seen = ((await client.callTool('down__whoami', {})).content[0] as { text: string }).text
    expect(seen.split(' ')[0]).toBe(gatewayClient.id)
    expect(downstreamTokens.length).toBeGreaterThan(0)
    expect(downstreamTokens).not.toContain(aliceToken)
    expect(downstreamTokens).not.toContain(bobToken)
    // Every token the server behind saw was the gateway's own (its client credentials, or the stored one), for that server.
    for (const token of new Set(downstreamTokens)) {
      expect(decodeJwt(token)).toMatchObject({ aud: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/) })
      expect([gatewayClient.id, stored.id]).toContain(decodeJwt(token).client_id)
    }
    expect(downstreamTokens.map(token => decodeJwt(token).aud)).not.toContain(gatewayUrl)
  })

  it('reaches a server with the token stored for it in a token file', async () => {
    const { client } = await gatewayClientWith(aliceToken, ['stored__whoami'])
    const seen = ((await client.callTool('stored__whoami', {})).content[0] as { text: string }).text
    expect(seen.split(' ')[0]).toBe(stored.id)
  })

  it('answers a principal over its budget 429 with Retry-After, and other principals go on', async () => {
    const carolToken = await tokenFor(carol, gatewayUrl, 'mcp')
    const post = await rawSession(carolToken)
    let refused: Response | undefined
    for (let id = 1; id <= 60 && refused === undefined; id++) {
      const response = await post({ jsonrpc: '2.0', id, method: 'ping' })
      if (response.status === 429) refused = response
      else await response.text()
    }
    expect(refused?.status).toBe(429)
    expect(Number(refused!.headers.get('retry-after'))).toBeGreaterThanOrEqual(1)
    expect(await refused!.json()).toMatchObject({ error: { code: -31029 } })
    // Alice's budget is her own.
    const { tools } = await gatewayClientWith(aliceToken)
    expect(tools).toContain('down__echo')
  })

  it('serves GET /healthz with each server\'s state and no secret, under the listener\'s Host rule', async () => {
    const health = await fetch(new URL('/healthz', gatewayUrl))
    expect(health.status).toBe(200)
    const text = await health.text()
    expect(JSON.parse(text)).toEqual({ status: 'ok', servers: { down: { status: 'ready' }, stored: { status: 'ready' } } })
    expect(text).not.toContain(gatewayClient.secret)
    const rebound = await new Promise<number>((resolve, reject) => {
      import('node:http').then(({ request }) => {
        const req = request(new URL('/healthz', gatewayUrl), { headers: { host: 'evil.example' } }, res => { res.resume(); resolve(res.statusCode!) })
        req.on('error', reject)
        req.end()
      }, reject)
    })
    expect(rebound).toBe(403)
  })

  it('writes an audit line per request, with who, what, outcome and duration, and arguments redacted by rule', async () => {
    const { client } = await gatewayClientWith(aliceToken)
    await client.callTool('down__echo', { text: 'key sk-abc123 here', apiKey: 'plain-key-value' })
    const asBob = await gatewayClientWith(bobToken)
    await asBob.client.callTool('down__secret', {}).catch(() => {})
    // The log is flushed and closed when the gateway stops.
    gateway.kill('SIGTERM')
    expect(await gatewayExited).toBe(0)
    const lines = (await readFile(auditPath, 'utf8')).trim().split('\n').map(line => JSON.parse(line) as Record<string, any>)
    const echo = lines.find(line => line.method === 'tools/call' && line.target === 'down__echo' && line.arguments?.text !== undefined)
    expect(echo).toMatchObject({ principal: { subject: alice.id }, outcome: 'result', arguments: { text: 'key [redacted] here', apiKey: '[redacted]' }, durationMs: expect.any(Number), time: expect.any(String) })
    const hidden = lines.find(line => line.method === 'tools/call' && line.target === 'down__secret' && line.principal?.subject === bob.id)
    expect(hidden).toMatchObject({ outcome: 'error', errorCode: -32602 })
    const all = JSON.stringify(lines)
    expect(all).not.toContain('sk-abc123')
    expect(all).not.toContain('plain-key-value')
    expect(all).not.toContain(gatewayClient.secret)
    expect(stderr).not.toContain(gatewayClient.secret)
  })
})

describe('rxmcp gateway --config over stdio', { timeout: 60_000 }, () => {
  it('applies the policy (rules without `when`: there is no principal) and writes the audit log where --audit-log says', async () => {
    const config = join(scratch, 'stdio.json')
    await writeFile(config, JSON.stringify({
      mcpServers: { ev: { command: process.execPath, args: ['--import', 'tsx', 'examples/everything/server.ts'] } },
      gateway: { policy: [{ allow: ['tools:call:ev__echo'] }], audit: { file: join(scratch, 'not-this-one.jsonl'), arguments: true } },
    }))
    const transport = stdioClient({ command: process.execPath, args: ['--import', 'tsx', 'bin/rxmcp.ts', 'gateway', '--config', config, '--audit-log', '-'], cwd: root, stderr: 'pipe', inheritEnv: true })
    let log = ''
    transport.stderr.subscribe({ next: chunk => { log += chunk }, error: () => {} })
    const client = await connect(transport, { name: 'stdio-caller', version: '1' }, { era: 'modern' })
    const events = new ReplaySubject<ListenEvent>()
    const listening = client.listen({ toolsListChanged: true }).subscribe(events)
    await firstValueFrom(events.pipe(filter(event => event.type === 'acknowledged')))
    let names = (await client.listTools()).tools.map(tool => tool.name)
    for (let waited = 0; !names.includes('ev__echo'); waited++) {
      await firstValueFrom(events.pipe(filter(event => event.type === 'notification'), skip(waited)))
      names = (await client.listTools()).tools.map(tool => tool.name)
    }
    listening.unsubscribe()
    expect(names).toEqual(['ev__echo'])
    expect(((await client.callTool('ev__echo', { text: 'over stdio', password: 'hunter2' })).content[0] as { text: string }).text).toContain('over stdio')
    expect(await client.callTool('ev__add', { a: 1, b: 2 }).catch((error: unknown) => error)).toMatchObject({ code: -32602 })
    await client.close()
    await transport.exited.catch(() => {})
    const lines = log.split('\n').filter(line => line.startsWith('{')).map(line => JSON.parse(line) as Record<string, any>)
    expect(lines.find(line => line.target === 'ev__echo' && line.method === 'tools/call')).toMatchObject({ outcome: 'result', arguments: { text: 'over stdio', password: '[redacted]' } })
    expect(lines.find(line => line.target === 'ev__add')).toMatchObject({ outcome: 'error', errorCode: -32602 })
    expect(log).not.toContain('hunter2')
  })
})

