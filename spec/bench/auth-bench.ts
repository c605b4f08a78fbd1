/**
 * The auth part of `npm run bench` (`BENCH_ONLY=auth`): what bearer-token checking costs a
 * tools/call over Streamable HTTP, against the same call with auth off, in one process (server and
 * driver share the CPU; the ratio and the µs per call are what to read).
 *
 * - off: no `auth` on the listener.
 * - jwt: `bearerAuth` + `jwtVerifier` (ES256, local key set), one token for every call: verified
 *   once, then served from the cache of verified tokens (what a client reusing its token costs).
 * - jwt, no cache: the same with `cacheSize: 0`, so every request verifies the signature.
 */
import { exportJWK, generateKeyPair, SignJWT } from 'jose'
import { createServer } from '../../actors/server.ts'
import { connect, type McpClient } from '../../actors/client.ts'
import { streamableHttp } from '../../transports/streamable-http.ts'
import { streamableHttpClient } from '../../transports/http-client.ts'
import { bearerAuth } from '../../auth/server.ts'
import { jwtVerifier } from '../../auth/verifiers.ts'
import type { Authenticator } from '../../lib/auth.ts'

/** One row of the auth bench. */
export interface AuthBenchRow { mode: string; inFlight: number; perSecond: number; addedUs: number }

const MODES = ['off', 'jwt', 'jwt, no cache'] as const

async function echoServer(mode: typeof MODES[number], issuerKeys: Awaited<ReturnType<typeof keys>>) {
  const server = createServer({ name: 'auth-bench', version: '1' })
  server.tool('echo', { inputSchema: { type: 'object', properties: { text: { type: 'string' } } } }, ({ text }) => ({ content: [{ type: 'text', text: String(text) }] }))
  let auth: Authenticator | undefined
  const http0 = streamableHttp({ port: 0 })
  await http0.start()
  const port = Number(new URL(http0.url!).port)
  await http0.close()
  const resource = `http://127.0.0.1:${port}/mcp`
  if (mode !== 'off') {
    auth = bearerAuth({
      resource, authorizationServers: ['https://issuer.bench'], cacheSize: mode === 'jwt' ? 10_000 : 0,
      verify: jwtVerifier({ issuer: 'https://issuer.bench', jwks: issuerKeys.jwks }),
    })
  }
  const http = streamableHttp({ port, auth })
  await server.listen(http)
  const token = await issuerKeys.sign(resource)
  const client = await connect(streamableHttpClient(http.url!, { headers: { authorization: `Bearer ${token}` } }), { name: 'bench', version: '1' })
  return { client, close: async () => { await client.close(); await server.close() } }
}

async function keys() {
  const { publicKey, privateKey } = await generateKeyPair('ES256')
  const jwks = { keys: [{ ...await exportJWK(publicKey), kid: 'b1', alg: 'ES256' }] }
  const sign = (audience: string) => new SignJWT({ scope: 'mcp', client_id: 'bench' }).setProtectedHeader({ alg: 'ES256', kid: 'b1' })
    .setIssuer('https://issuer.bench').setSubject('bench-user').setAudience(audience).setIssuedAt().setExpirationTime('1h').sign(privateKey)
  return { jwks, sign }
}

async function rate(client: McpClient, inFlight: number, ms: number): Promise<number> {
  let count = 0
  const end = performance.now() + ms
  await Promise.all(Array.from({ length: inFlight }, async () => {
    while (performance.now() < end) { await client.callTool('echo', { text: 'hi' }); count++ }
  }))
  return count / (ms / 1000)
}

/** Runs the comparison; prints and returns the rows. */
export async function runAuthBench(seconds = 1): Promise<AuthBenchRow[]> {
  const issuerKeys = await keys()
  const rows: AuthBenchRow[] = []
  for (const inFlight of [1, 64]) {
    const sides = await Promise.all(MODES.map(mode => echoServer(mode, issuerKeys)))
    for (const side of sides) await rate(side.client, inFlight, 200)
    // Interleaved rounds, so that a slower stretch of the machine lands on every mode alike.
    const totals = MODES.map(() => 0)
    const rounds = 3
    for (let round = 0; round < rounds; round++) {
      for (const [index, side] of sides.entries()) totals[index]! += await rate(side.client, inFlight, (seconds * 1000) / rounds)
    }
    const perSecond = totals.map(total => total / rounds)
    for (const [index, mode] of MODES.entries()) {
      const row = { mode, inFlight, perSecond: perSecond[index]!, addedUs: 1e6 / perSecond[index]! - 1e6 / perSecond[0]! }
      rows.push(row)
      console.log(`  ${mode.padEnd(14)} ${String(inFlight).padStart(2)} in flight  ${row.perSecond.toFixed(0).padStart(6)} calls/s  ${index === 0 ? '' : `${(perSecond[0]! / row.perSecond).toFixed(3)}x time, ${row.addedUs >= 0 ? '+' : ''}${row.addedUs.toFixed(1)} µs per call`}`)
    }
    for (const side of sides) await side.close()
  }
  return rows
}
