import { afterEach, describe, expect, it } from 'vitest'
import { createServer, type McpServer } from '../../actors/server.ts'
import { permissions } from '../../actors/server/middleware.ts'
import { parseGatewayConfig } from '../../lib/gateway-config.ts'
import { HostConfigError, parseHostConfig } from '../../lib/host-config.ts'
import type { Principal } from '../../lib/auth.ts'
import { gatewayAuthenticator, gatewayHealth, gatewayPolicy, gatewayProduct, matches, redactValue } from '../../host/gateway-product.ts'
import { namespacedNames, toolNameIssues } from '../../lib/tool-names.ts'
import { rawClient } from '../helpers/raw-client.ts'

/**
 * The pieces of the gateway as a product, each alone: the config section, the policy it makes
 * (templates, completion, roles and claims), the health document, the audit redaction, the rate
 * limit on stdio, and SEP-986 names on the aggregated view. `rxmcp gateway` with all of them
 * together, over HTTP with real tokens: spec/bin/rxmcp-gateway-product.spec.ts.
 */
const closers: (() => Promise<void>)[] = []
afterEach(async () => { for (const close of closers.splice(0).reverse()) await close() })

describe('parseGatewayConfig', () => {
  it('reads every key, expands ${VAR}, and fills the defaults', () => {
    const found: string[] = []
    const { config, problems } = parseGatewayConfig({
      gateway: {
        auth: { issuer: 'https://login.example.com', resource: 'https://mcp.example.com/mcp', introspection: { endpoint: 'https://login.example.com/introspect', clientId: 'gw', clientSecret: '${SECRET}' }, requiredScopes: ['mcp'] },
        policy: [{ when: { roles: ['reader'], claims: { org: 'acme' } }, servers: ['files'], deny: ['tools:call:files__delete'] }],
        rateLimit: { capacity: 10, refillPerSecond: 2 },
        audit: { file: '-', arguments: true, redact: { keys: ['pin'], patterns: ['\\d{16}'] } },
      },
    }, { SECRET: 'introspection-secret' }, variable => found.push(variable))
    expect(problems).toEqual([])
    expect(config.auth?.introspection?.clientSecret).toBe('introspection-secret')
    expect(found).toEqual(['SECRET'])
    expect(config.policy).toEqual([{ when: { roles: ['reader'], claims: { org: 'acme' } }, allow: [], servers: ['files'], deny: ['tools:call:files__delete'] }])
    expect(config.audit).toMatchObject({ file: '-', isArgumentsIncluded: true, redactKeys: expect.arrayContaining(['pin', 'password', 'token']) })
    expect(config.healthPath).toBe('/healthz')
    expect(parseGatewayConfig({ mcpServers: {} }).config).toEqual({ healthPath: '/healthz' })
    expect(parseGatewayConfig({ gateway: { health: false } }).config.healthPath).toBeUndefined()
    expect(parseGatewayConfig({ gateway: { mode: 'session' } }).config.mode).toBe('session')
    expect(parseGatewayConfig({ gateway: { mode: 'per-user' } }).problems).toEqual(['gateway.mode: must be "shared" or "session"'])
  })

  it('names every problem with its field', () => {
    const { problems } = parseGatewayConfig({
      gateway: {
        auth: { issuer: 'login', jwksUrl: 'https://x/jwks', introspection: { endpoint: 'https://x/i', clientId: 'a', clientSecret: 'b' } },
        policy: [{ when: { team: 'x' } }],
        rateLimit: { capacity: 0 },
        audit: { redact: { patterns: ['('] } },
        health: { path: '/mcp' },
        extra: 1,
      },
    }, {})
    expect(problems).toEqual(expect.arrayContaining([
      'gateway.extra: unknown field (auth, policy, rateLimit, audit, health, mode)',
      'gateway.auth.issuer: must be an http(s) URL',
      expect.stringContaining('gateway.auth.resource: required'),
      'gateway.auth: give one of jwksUrl (JWT access tokens) or introspection (opaque tokens)',
      'gateway.policy[0].when.team: unknown field (scopes, roles, claims, subjects)',
      'gateway.policy[0]: allows and denies nothing (give allow, servers or deny)',
      expect.stringContaining('gateway.rateLimit: must be'),
      expect.stringContaining('gateway.audit.redact.patterns[0]:'),
      expect.stringContaining('gateway.health.path: must be a path'),
    ]))
  })
})

describe('parseHostConfig oauth', () => {
  it('reads a server\'s client credentials and stored tokens, and refuses OAuth for stdio', () => {
    const config = parseHostConfig({
      mcpServers: {
        search: { url: 'https://search.example.com/mcp', oauth: { issuer: 'https://login.example.com', clientId: 'gw', clientSecret: '${S}', scope: 'search' } },
        files: { url: 'https://files.example.com/mcp', oauth: { tokenStore: '/home/me/.config/rxmcp/tokens.json' } },
      },
    }, { S: 'the-client-secret' })
    expect(config.servers.get('search')?.oauth).toEqual({ grant: 'client_credentials', issuer: 'https://login.example.com', clientId: 'gw', clientSecret: 'the-client-secret', scope: 'search' })
    expect(config.servers.get('files')?.oauth).toEqual({ grant: 'stored', tokenStore: '/home/me/.config/rxmcp/tokens.json' })
    expect(config.expansions?.get('the-client-secret')).toBe('S')
    let error: unknown
    try { parseHostConfig({ mcpServers: { local: { command: 'x', oauth: { tokenStore: '/t' } }, half: { url: 'https://h/mcp', oauth: { grant: 'client_credentials', clientId: 'a' } } } }) } catch (caught) { error = caught }
    expect(error).toBeInstanceOf(HostConfigError)
    expect((error as HostConfigError).problems).toEqual(expect.arrayContaining([
      expect.stringContaining('mcpServers.local.oauth: OAuth is for servers reached at a URL'),
      'mcpServers.half.oauth.issuer: the client_credentials grant needs it',
      'mcpServers.half.oauth.clientSecret: the client_credentials grant needs it',
    ]))
  })
})

describe('gatewayPolicy', () => {
  const alice: Principal = { subject: 'alice', scopes: ['mcp'], claims: { roles: ['reader', 'x'], org: 'acme', groups: ['ops'] } }
  it.each([
    [{}, undefined, true],
    [{ scopes: ['mcp'] }, alice, true],
    [{ scopes: ['mcp', 'admin'] }, alice, false],
    [{ roles: ['writer', 'reader'] }, alice, true],
    [{ roles: ['writer'] }, alice, false],
    [{ claims: { org: 'acme' } }, alice, true],
    [{ claims: { groups: 'ops' } }, alice, true],
    [{ claims: { org: 'other' } }, alice, false],
    [{ subjects: ['alice'] }, alice, true],
    [{ subjects: ['bob'] }, undefined, false],
  ])('matches %j against %j: %s', (when, principal, expected) => {
    expect(matches(when, principal)).toBe(expected)
  })

  /** A server with what a policy filters: tools and prompts by name, resources and templates by URI, completion by ref. */
  async function policed(rules: Parameters<typeof gatewayPolicy>[0], principal?: Principal) {
    const server: McpServer = createServer({ name: 'policed', version: '1' })
    closers.push(() => server.close())
    server.tool('files__read', {}, () => ({ content: [] }))
    server.tool('files__delete', {}, () => ({ content: [] }))
    server.tool('search__query', {}, () => ({ content: [] }))
    server.prompt('files__summary', { arguments: [{ name: 'path' }], complete: { path: value => [`${value}.md`] } }, () => ({ messages: [] }))
    server.resource('file:///docs/readme', { name: 'readme' }, () => 'hi')
    server.resource('file:///secret/keys', { name: 'keys' }, () => 'k')
    server.resourceTemplate('file:///docs/{name}', { name: 'docs', complete: { name: value => [`${value}-guide`] } }, uri => uri)
    server.resourceTemplate('file:///{path}', { name: 'any', complete: { path: () => ['x'] } }, uri => uri)
    // The policy as the gateway makes it, its roles those of the principal a transport would bring.
    const policy = gatewayPolicy(rules)
    server.use(permissions({ ...policy, rolesOf: () => policy.rolesOf!({ principal } as never) }))
    const client = await rawClient(server, close => closers.push(close))
    await client.call('initialize', { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' } })
    return client
  }

  it('filters tools, prompts, resources and templates by rule, and answers what is hidden as unknown', async () => {
    const { call, failure } = await policed([
      { when: { roles: ['reader'] }, allow: ['resources:read:file:///docs/*'], servers: ['files'], deny: ['tools:call:files__delete'] },
      { when: { scopes: ['search'] }, allow: ['tools:call:search__*'], servers: [], deny: [] },
    ], alice)
    expect(((await call('tools/list')).tools as { name: string }[]).map(tool => tool.name)).toEqual(['files__read'])
    expect(((await call('prompts/list')).prompts as { name: string }[]).map(prompt => prompt.name)).toEqual(['files__summary'])
    expect(((await call('resources/list')).resources as { uri: string }[]).map(resource => resource.uri)).toEqual(['file:///docs/readme'])
    expect(((await call('resources/templates/list')).resourceTemplates as { uriTemplate: string }[]).map(template => template.uriTemplate)).toEqual(['file:///docs/{name}'])
    expect(await failure('tools/call', { name: 'files__delete', arguments: {} })).toMatchObject({ code: -32602, message: expect.stringContaining('unknown tool') })
    expect(await failure('tools/call', { name: 'search__query', arguments: {} })).toMatchObject({ code: -32602 })
    expect(await failure('resources/read', { uri: 'file:///secret/keys' })).toMatchObject({ code: -32002 })
    expect((await call('resources/read', { uri: 'file:///docs/guide' })).contents).toBeDefined()
  })

  it('lets completion through only for a prompt or template the caller may use', async () => {
    const { call, failure } = await policed([{ when: {}, allow: ['resources:read:file:///docs/*', 'prompts:get:files__summary'], servers: [], deny: [] }])
    expect((await call('completion/complete', { ref: { type: 'ref/prompt', name: 'files__summary' }, argument: { name: 'path', value: 'a' } })).completion).toMatchObject({ values: ['a.md'] })
    expect((await call('completion/complete', { ref: { type: 'ref/resource', uri: 'file:///docs/{name}' }, argument: { name: 'name', value: 'b' } })).completion).toMatchObject({ values: ['b-guide'] })
    expect(await failure('completion/complete', { ref: { type: 'ref/resource', uri: 'file:///{path}' }, argument: { name: 'path', value: '' } })).toMatchObject({ code: -32602 })
  })

  it('shows nothing to a principal no rule matches', async () => {
    const { call, failure } = await policed([{ when: { scopes: ['admin'] }, allow: ['*'], servers: [], deny: [] }], alice)
    expect((await call('tools/list')).tools).toEqual([])
    expect((await call('resources/templates/list')).resourceTemplates).toEqual([])
    expect(await failure('prompts/get', { name: 'files__summary', arguments: {} })).toMatchObject({ code: -32602 })
  })
})

describe('gatewayProduct', () => {
  it('answers a principal over its budget with -31029 on stdio (no HTTP status there)', async () => {
    let now = 0
    const product = await gatewayProduct({ rateLimit: { capacity: 2, refillPerSecond: 1 } }, { isStdio: true, now: () => now })
    expect(product.rateLimit).toBeUndefined()
    const server = createServer({ name: 'limited', version: '1' })
    closers.push(() => server.close())
    server.tool('echo', {}, () => ({ content: [] }))
    server.use(...product.middleware)
    const { call, failure } = await rawClient(server, close => closers.push(close))
    await call('initialize', { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' } })
    await call('tools/list')
    await call('tools/list')
    expect(await failure('tools/list')).toMatchObject({ code: -31029, data: { retryAfterMs: 1000 } })
    now += 1000
    await call('tools/list')
    // Over HTTP the same budget is the listener's (429 with Retry-After), not middleware.
    const overHttp = await gatewayProduct({ rateLimit: { capacity: 2, refillPerSecond: 1 } }, { isStdio: false })
    expect(overHttp.middleware).toEqual([])
    expect(overHttp.rateLimit).toMatchObject({ capacity: 2, refillPerSecond: 1 })
  })

  it('writes one audit line per request to its stream, arguments redacted by key, pattern and ${VAR} value', async () => {
    const lines: string[] = []
    const secrets = parseHostConfig({ mcpServers: { a: { command: 'x', env: { K: '${TOKEN}' } } } }, { TOKEN: 'a-configured-secret' })
    const product = await gatewayProduct({ audit: { file: '-', isArgumentsIncluded: true, redactKeys: ['password'], redactPatterns: [/sk-[a-z0-9]+/g] } }, { isStdio: true, stderr: { write: line => lines.push(line) }, secrets: () => secrets, now: () => 1_700_000_000_000 })
    const server = createServer({ name: 'audited', version: '1' })
    closers.push(() => server.close())
    server.tool('login', {}, () => ({ content: [] }))
    server.use(...product.middleware)
    const { call } = await rawClient(server, close => closers.push(close))
    await call('initialize', { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' } })
    await call('tools/call', { name: 'login', arguments: { user: 'me', password: 'hunter2', note: 'use sk-abc1 or a-configured-secret', nested: [{ Password: 'x' }] } })
    const line = JSON.parse(lines.find(text => text.includes('"tools/call"'))!)
    expect(line).toEqual({
      time: '2023-11-14T22:13:20.000Z', method: 'tools/call', target: 'login', era: 'legacy', requestId: expect.anything(), outcome: 'result', durationMs: 0,
      arguments: { user: 'me', password: '[redacted]', note: 'use [redacted] or ${TOKEN}', nested: [{ Password: '[redacted]' }] },
    })
    expect(lines.every(text => text.endsWith('\n'))).toBe(true)
  })
})

describe('redactValue', () => {
  it('replaces values of listed keys at any depth, and passes strings through the text rule', () => {
    expect(redactValue({ a: { token: 1, b: ['x', { TOKEN: 2 }] } }, new Set(['token']), text => text.toUpperCase())).toEqual({ a: { token: '[redacted]', b: ['X', { TOKEN: '[redacted]' }] } })
  })
})

describe('gatewayHealth', () => {
  it.each([
    [[], 'ok'],
    [[['a', { status: 'ready', serverInfo: { name: 'a', version: '1' } }]], 'ok'],
    [[['a', { status: 'ready', serverInfo: { name: 'a', version: '1' } }], ['b', { status: 'failed', reason: 'spawn ENOENT /secret/path', stderr: ['token=abc'] }]], 'degraded'],
    [[['a', { status: 'starting', attempt: 0 }]], 'unavailable'],
  ] as const)('%j is %s, without reasons', (states, status) => {
    const health = gatewayHealth(new Map(states as never))
    expect(health.status).toBe(status)
    expect(JSON.stringify(health)).not.toMatch(/secret|token|reason|stderr/)
  })
})

describe('SEP-986 names on the aggregated view', () => {
  it('gives every downstream tool a name of 1 to 64 characters of A-Z a-z 0-9 _ -, whatever the server called it', () => {
    const names = namespacedNames([
      { server: 'files', name: 'read file' }, { server: 'files', name: 'read_file' }, { server: 'web', name: 'fetch.page' },
      { server: 'web', name: 'ünïcødé/tool,v2' }, { server: 'long', name: 'x'.repeat(200) }, { server: 'a', name: '' },
    ])
    for (const name of names) expect(toolNameIssues(name)).toEqual([])
    expect(new Set(names).size).toBe(names.length)
    // `.` is allowed by SEP-986 but not by every model API the host feeds: it becomes `_` (README).
    expect(names[2]).toBe('web__fetch_page')
  })
})

describe('gatewayAuthenticator', () => {
  it('checks opaque tokens at the authorization server\'s introspection endpoint (oidc-provider), audience included', async () => {
    const { startAuthorizationServer } = await import('../auth/oidc.ts')
    const as = await startAuthorizationServer({ scopes: 'mcp', accessTokenFormat: 'opaque' })
    closers.push(() => as.close())
    const register = async () => {
      const response = await fetch(`${as.issuer}/reg`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ grant_types: ['client_credentials'], response_types: [], redirect_uris: [], token_endpoint_auth_method: 'client_secret_basic' }) })
      const body = await response.json() as { client_id: string; client_secret: string }
      return { id: body.client_id, secret: body.client_secret }
    }
    const [gateway, caller] = [await register(), await register()]
    const token = async (resource: string) => {
      const response = await fetch(`${as.issuer}/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Basic ${btoa(`${caller.id}:${caller.secret}`)}` },
        body: new URLSearchParams({ grant_type: 'client_credentials', scope: 'mcp', resource }).toString(),
      })
      return (await response.json() as { access_token: string }).access_token
    }
    const resource = 'http://127.0.0.1:9/mcp'
    const auth = await gatewayAuthenticator({
      issuer: as.issuer, resource, requiredScopes: ['mcp'],
      introspection: { endpoint: `${as.issuer}/token/introspection`, clientId: gateway.id, clientSecret: gateway.secret },
    })
    const request = (bearer: string) => ({ method: 'POST', pathname: '/mcp', header: (name: string) => name.toLowerCase() === 'authorization' ? `Bearer ${bearer}` : null })
    const allowed = await auth.authenticate(request(await token(resource)))
    expect(allowed).toMatchObject({ type: 'allow', principal: { subject: caller.id, scopes: ['mcp'] } })
    const elsewhere = await auth.authenticate(request(await token('http://127.0.0.1:10/mcp')))
    expect(elsewhere).toMatchObject({ type: 'refuse', answer: { status: 401 } })
    expect(await auth.authenticate(request('not-a-token'))).toMatchObject({ type: 'refuse', answer: { status: 401 } })
  })
})
