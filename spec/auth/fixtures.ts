import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import { exportJWK, generateKeyPair, SignJWT, type JWK, type JWTPayload } from 'jose'

/** An issuer for tests: an ES256 key pair, its public key set, and a signer of access tokens. */
export interface TestIssuer {
  readonly issuer: string
  readonly jwks: { keys: JWK[] }
  /** A signed access token; `claims` override the defaults (sub alice, aud `audience`, exp in an hour). */
  token(claims?: JWTPayload, options?: { expiresInSec?: number; kid?: string }): Promise<string>
}

export async function testIssuer(issuer: string, audience: string): Promise<TestIssuer> {
  const { publicKey, privateKey } = await generateKeyPair('ES256', { extractable: true })
  const jwk = { ...await exportJWK(publicKey), kid: 'k1', alg: 'ES256', use: 'sig' }
  return {
    issuer,
    jwks: { keys: [jwk] },
    async token(claims = {}, options = {}) {
      const now = Math.floor(Date.now() / 1000)
      return new SignJWT({ scope: 'mcp', client_id: 'test-client', ...claims })
        .setProtectedHeader({ alg: 'ES256', kid: options.kid ?? 'k1', typ: 'at+jwt' })
        .setIssuer(typeof claims.iss === 'string' ? claims.iss : issuer)
        .setSubject(typeof claims.sub === 'string' ? claims.sub : 'alice')
        .setAudience((claims.aud as string | string[] | undefined) ?? audience)
        .setIssuedAt(now)
        .setExpirationTime(now + (options.expiresInSec ?? 3600))
        .sign(privateKey)
    },
  }
}

/** A node:http server on loopback for a test's own endpoints (a JWKS, an introspection endpoint). */
export async function loopbackServer(handle: (req: IncomingMessage, res: ServerResponse, body: string) => void): Promise<{ url: string; server: Server; close: () => Promise<void> }> {
  const server = createHttpServer((req, res) => {
    let body = ''
    req.on('data', chunk => { body += chunk })
    req.on('end', () => handle(req, res, body))
  })
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as { port: number }
  return {
    url: `http://127.0.0.1:${port}`,
    server,
    close: () => new Promise<void>(resolve => { server.closeAllConnections(); server.close(() => resolve()) }),
  }
}

/** An unsigned token (`alg: none`) with the given claims. */
export function unsignedToken(claims: JWTPayload): string {
  const encode = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url')
  return `${encode({ alg: 'none', typ: 'JWT' })}.${encode(claims)}.`
}

/** A loopback port free right now (the listener under test binds it next). */
export { freeLoopbackPort as freePort } from '../../examples/cluster/spawn-nginx.ts'
