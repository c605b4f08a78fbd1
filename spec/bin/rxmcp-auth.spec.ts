import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { spawn } from 'node:child_process'
import { mkdtemp, rm, stat } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { createServer, type McpServer } from '../../actors/server.ts'
import { streamableHttp } from '../../transports/streamable-http.ts'
import { bearerAuth } from '../../auth/server.ts'
import { jwtVerifier } from '../../auth/verifiers.ts'
import { freePort } from '../auth/fixtures.ts'
import { actAsUser, startAuthorizationServer, type TestAuthorizationServer } from '../auth/oidc.ts'

/**
 * `rxmcp call` against a protected server, as a user runs it: the CLI prints the authorization URL,
 * the user signs in (here: the test, through oidc-provider's forms), the browser comes back to the
 * CLI's loopback listener, and the tool result is printed. The tokens land in a 0600 file, and the
 * next run uses them without asking.
 */
const root = fileURLToPath(new URL('../..', import.meta.url))
let as: TestAuthorizationServer
let server: McpServer
let url: string
let scratch: string

/** Runs the CLI; when it prints an authorization URL, signs in and sends the browser back. */
function rxmcpAsUser(args: string[]): Promise<{ code: number; stdout: string; stderr: string; authorizations: number }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'bin/rxmcp.ts', ...args], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, XDG_CONFIG_HOME: scratch } })
    let stdout = ''
    let stderr = ''
    let authorizations = 0
    const timer = setTimeout(() => { child.kill('SIGKILL'); reject(new Error(`rxmcp did not finish: ${stderr}`)) }, 60_000)
    child.stdout.on('data', chunk => { stdout += chunk })
    child.stderr.on('data', chunk => {
      stderr += chunk
      const match = /Open this URL in a browser to authorize:\n\s+(\S+)\n/.exec(stderr.slice(stderr.lastIndexOf('Open this URL')))
      if (match === null || authorizations > 0) return
      authorizations++
      const authorizationUrl = new URL(match[1]!)
      const redirectUri = authorizationUrl.searchParams.get('redirect_uri')!
      void actAsUser(authorizationUrl, redirectUri, 'cli-user').then(callback => fetch(callback)).then(response => response.text(), reject)
    })
    child.on('exit', code => { clearTimeout(timer); resolve({ code: code ?? 1, stdout, stderr, authorizations }) })
  })
}

beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), 'rxmcp-cli-auth-'))
  as = await startAuthorizationServer({ scopes: 'mcp' })
  const port = await freePort()
  const resource = `http://127.0.0.1:${port}/mcp`
  server = createServer({ name: 'protected', version: '1' })
  server.tool('whoami', {}, (_args, ctx) => ({ content: [{ type: 'text', text: `${ctx.principal?.subject}` }] }))
  const http = streamableHttp({ port, auth: bearerAuth({ resource, authorizationServers: [as.issuer], requiredScopes: ['mcp'], verify: jwtVerifier({ issuer: as.issuer, jwksUrl: as.jwksUri }) }) })
  await server.listen(http)
  url = http.url!
})
afterAll(async () => {
  await server?.close()
  await as?.close()
  if (scratch !== undefined) await rm(scratch, { recursive: true, force: true })
})

describe('rxmcp against a protected server', () => {
  it('authorizes through a loopback redirect, keeps the tokens in a 0600 file, and reuses them on the next run', async () => {
    const first = await rxmcpAsUser(['call', 'whoami', '{}', url])
    expect(first.code, first.stderr).toBe(0)
    expect(first.authorizations).toBe(1)
    expect(JSON.parse(first.stdout)).toEqual({ content: [{ type: 'text', text: 'cli-user' }] })
    const store = join(scratch, 'rxmcp', 'tokens.json')
    expect((await stat(store)).mode & 0o777).toBe(0o600)
    const second = await rxmcpAsUser(['call', 'whoami', '{}', url])
    expect(second.code, second.stderr).toBe(0)
    expect(second.authorizations).toBe(0)
    expect(JSON.parse(second.stdout)).toEqual({ content: [{ type: 'text', text: 'cli-user' }] })
  }, 90_000)

  it('with --no-auth, a 401 is an error and no authorization is started', async () => {
    const refused = await rxmcpAsUser(['call', 'whoami', '{}', '--no-auth', url])
    expect(refused.code).toBe(1)
    expect(refused.authorizations).toBe(0)
    expect(refused.stderr).toContain('401')
  }, 60_000)
})
