/**
 * Issue 20, the listening commands as an attacker meets them: `rxmcp gateway` and `rxmcp bridge` as
 * child processes, bound to 0.0.0.0 and reached over 127.0.0.1.
 */
import { afterEach, describe, expect, it } from 'vitest'
import { spawn, type ChildProcess } from 'node:child_process'
import { existsSync } from 'node:fs'
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { createServer as createHttpServer, request, type Server } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { SignJWT, exportJWK, generateKeyPair } from 'jose'
import { WebSocket } from 'ws'
import { connect } from '../../actors/client.ts'
import { httpClient } from '../../transports/http-client.ts'

const root = fileURLToPath(new URL('../..', import.meta.url))
const fixture = fileURLToPath(new URL('../interop/fixtures/bridge-child.mjs', import.meta.url))
const TOKEN = 'c0ffee'.repeat(8)

const cleanup: (() => Promise<unknown> | void)[] = []
afterEach(async () => { for (const step of cleanup.splice(0).reverse()) await step() })

async function scratch(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'rxmcp-exposure-'))
  cleanup.push(() => rm(dir, { recursive: true, force: true }))
  return dir
}

/** A gateway config whose one server writes `marker` when it starts, so a test can tell whether anything started. */
async function gatewayConfig(dir: string): Promise<{ config: string; marker: string }> {
  const marker = join(dir, 'started')
  const config = join(dir, 'mcp.json')
  // The fixture does not know the marker: a wrapper writes it, then becomes the fixture.
  const wrapper = join(dir, 'wrapper.mjs')
  await writeFile(wrapper, `import { writeFileSync } from 'node:fs'\nwriteFileSync(process.env.RXMCP_MARKER, '')\nawait import(${JSON.stringify(fixture)})\n`)
  await writeFile(config, JSON.stringify({ mcpServers: { child: { command: process.execPath, args: [wrapper], env: { RXMCP_MARKER: marker } } } }))
  return { config, marker }
}

/** Runs the CLI; resolves with its exit code and output, or with the URL it serves once it says so. */
function rxmcp(args: string[]): { child: ChildProcess; served: Promise<string>; exited: Promise<number>; log: () => string } {
  const child = spawn(process.execPath, ['--import', 'tsx', 'bin/rxmcp.ts', ...args], { cwd: root, stdio: ['ignore', 'ignore', 'pipe'] })
  let log = ''
  const exited = new Promise<number>(resolve => child.once('exit', code => resolve(code ?? 1)))
  cleanup.push(async () => { if (child.exitCode === null) { child.kill('SIGTERM'); await exited } })
  const served = new Promise<string>((resolve, reject) => {
    child.stderr!.on('data', chunk => {
      log += chunk
      const match = /(?:serving|served at) http:\/\/[^:]+:(\d+)\/mcp/.exec(log)
      if (match) resolve(`http://127.0.0.1:${match[1]}/mcp`)
    })
    void exited.then(code => reject(new Error(`rxmcp exited ${code}: ${log}`)))
  })
  served.catch(() => {})
  return { child, served, exited, log: () => log }
}

/** The status a WebSocket upgrade gets (101 when it opens). */
function upgrade(url: string, headers: Record<string, string> = {}): Promise<number> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(url.replace(/^http/, 'ws'), ['mcp'], { headers })
    socket.once('open', () => { socket.terminate(); resolve(101) })
    socket.once('unexpected-response', (_, res) => { res.resume(); resolve(res.statusCode!) })
    socket.once('error', reject)
  })
}

/** A raw POST with the Host header given, as a browser under DNS rebinding would send it. */
function post(url: string, headers: Record<string, string>, body = '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}'): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers } }, res => { res.resume(); resolve(res.statusCode!) })
    req.on('error', reject)
    req.end(body)
  })
}

describe('issue 20: rxmcp gateway --host 0.0.0.0 is wide open', { timeout: 60_000 }, () => {
  it('refuses to start beyond loopback without authentication or --allow-unauthenticated, and starts no server', async () => {
    const dir = await scratch()
    const { config, marker } = await gatewayConfig(dir)
    const run = rxmcp(['gateway', '--config', config, '--port', '0', '--host', '0.0.0.0'])
    expect(await Promise.race([run.exited, run.served.then(() => 'served')])).toBe(2)
    expect(run.log()).toContain('gateway refuses to listen on 0.0.0.0 (not loopback) without authentication')
    expect(run.log()).toContain('--allow-unauthenticated')
    expect(existsSync(marker)).toBe(false)
  })

  it('with --allow-unauthenticated it starts, prints the warning, and refuses a foreign Host; --allowed-host names are accepted', async () => {
    const dir = await scratch()
    const { config } = await gatewayConfig(dir)
    const run = rxmcp(['gateway', '--config', config, '--port', '0', '--host', '0.0.0.0', '--allow-unauthenticated', '--allowed-host', 'gateway.example'])
    const url = await run.served
    expect(run.log()).toMatch(/rxmcp gateway: WARNING: listening on 0\.0\.0\.0, not loopback; there is no authentication/)
    expect(run.log()).toContain('gateway.example')
    const port = new URL(url).port
    expect(await post(url, { host: `evil.example.com:${port}` })).toBe(403)
    expect(await post(url, { host: 'evil.example.com' })).toBe(403)
    expect(await post(url, { host: `gateway.example:${port}` })).toBe(200)
    expect(await post(url, { host: `127.0.0.1:${port}` })).toBe(200)
  })

  it('with --auth-token-file every request needs the token: none or a wrong one gets 401, the token calls tools', async () => {
    const dir = await scratch()
    const { config } = await gatewayConfig(dir)
    const tokenFile = join(dir, 'token')
    await writeFile(tokenFile, `${TOKEN}\n`, { mode: 0o600 })
    const run = rxmcp(['gateway', '--config', config, '--port', '0', '--host', '0.0.0.0', '--auth-token-file', tokenFile])
    const url = await run.served
    expect(run.log()).toContain(`every request needs the bearer token of ${tokenFile}`)
    const port = new URL(url).port
    expect(await post(url, { host: `127.0.0.1:${port}` })).toBe(401)
    expect(await post(url, { host: `127.0.0.1:${port}`, authorization: `Bearer ${'0'.repeat(48)}` })).toBe(401)
    // The Host check holds for a holder of the token too.
    expect(await post(url, { host: `evil.example.com:${port}`, authorization: `Bearer ${TOKEN}` })).toBe(403)
    // The WebSocket listener on the same port asks the same.
    expect(await upgrade(url)).toBe(401)
    expect(await upgrade(url, { authorization: `Bearer ${TOKEN}` })).toBe(101)
    const client = await connect(httpClient(url, { headers: { authorization: `Bearer ${TOKEN}` } }), { name: 't', version: '1' })
    cleanup.push(() => client.close())
    await expect.poll(async () => (await client.listTools()).tools.map(tool => tool.name), { timeout: 20_000 }).toContain('child__env')
    const result = await client.callTool('child__env')
    expect(result.isError).not.toBe(true)
  })

  it('refuses a token file others may read, or a short token', async () => {
    const dir = await scratch()
    const { config } = await gatewayConfig(dir)
    const tokenFile = join(dir, 'token')
    await writeFile(tokenFile, TOKEN)
    await chmod(tokenFile, 0o644)
    const open = rxmcp(['gateway', '--config', config, '--port', '0', '--host', '0.0.0.0', '--auth-token-file', tokenFile])
    expect(await Promise.race([open.exited, open.served.then(() => 'served')])).toBe(2)
    expect(open.log()).toContain('may be read by others')
    await writeFile(join(dir, 'short'), 'abc', { mode: 0o600 })
    const short = rxmcp(['gateway', '--config', config, '--port', '0', '--host', '0.0.0.0', '--auth-token-file', join(dir, 'short')])
    expect(await Promise.race([short.exited, short.served.then(() => 'served')])).toBe(2)
    expect(short.log()).toContain('at least 32 characters')
  })

  it('with --auth-issuer, --auth-jwks-url and --auth-resource it takes only that issuer\'s JWT access tokens for that resource', async () => {
    const dir = await scratch()
    const { config } = await gatewayConfig(dir)
    const { publicKey, privateKey } = await generateKeyPair('ES256')
    const jwk = { ...(await exportJWK(publicKey)), kid: 'k1', alg: 'ES256' }
    const keys: Server = createHttpServer((_, res) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ keys: [jwk] })))
    await new Promise<void>(resolve => keys.listen(0, '127.0.0.1', resolve))
    cleanup.push(() => new Promise(resolve => keys.close(resolve)))
    const jwksUrl = `http://127.0.0.1:${(keys.address() as { port: number }).port}/jwks`
    const issuer = 'https://issuer.example'
    const resource = 'https://gateway.example/mcp'
    const run = rxmcp(['gateway', '--config', config, '--port', '0', '--host', '0.0.0.0', '--auth-issuer', issuer, '--auth-jwks-url', jwksUrl, '--auth-resource', resource])
    const url = await run.served
    const port = new URL(url).port
    const token = (audience: string) => new SignJWT({ scope: 'mcp' }).setProtectedHeader({ alg: 'ES256', kid: 'k1' }).setIssuer(issuer).setSubject('alice')
      .setAudience(audience).setIssuedAt().setExpirationTime('5m').sign(privateKey)
    expect(await post(url, { host: `127.0.0.1:${port}` })).toBe(401)
    expect(await post(url, { host: `127.0.0.1:${port}`, authorization: `Bearer ${await token('https://other.example/mcp')}` })).toBe(401)
    expect(await post(url, { host: `127.0.0.1:${port}`, authorization: `Bearer ${await token(resource)}` })).toBe(200)
  })
})

describe('issue 20: rxmcp bridge beyond loopback follows the gateway\'s rule', { timeout: 60_000 }, () => {
  it('refuses to start on 0.0.0.0 without authentication or --allow-unauthenticated', async () => {
    const run = rxmcp(['bridge', '--port', '0', '--host', '0.0.0.0', '--', process.execPath, fixture])
    expect(await Promise.race([run.exited, run.served.then(() => 'served')])).toBe(2)
    expect(run.log()).toContain('bridge refuses to listen on 0.0.0.0 (not loopback) without authentication')
  })

  it('with --auth-token-file it answers 401 without the token and serves with it', async () => {
    const dir = await scratch()
    const tokenFile = join(dir, 'token')
    await writeFile(tokenFile, TOKEN, { mode: 0o600 })
    const run = rxmcp(['bridge', '--port', '0', '--host', '0.0.0.0', '--auth-token-file', tokenFile, '--', process.execPath, fixture])
    const url = await run.served
    expect(run.log()).toContain('rxmcp bridge: WARNING: listening on 0.0.0.0, not loopback; every request needs the bearer token')
    const port = new URL(url).port
    expect(await post(url, { host: `127.0.0.1:${port}` })).toBe(401)
    expect(await post(url, { host: `127.0.0.1:${port}`, authorization: `Bearer ${TOKEN}` })).toBe(200)
  })
})
