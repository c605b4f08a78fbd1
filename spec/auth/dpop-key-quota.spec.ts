import { createHash, randomUUID } from 'node:crypto'
import { calculateJwkThumbprint, exportJWK, generateKeyPair, SignJWT, type JWK } from 'jose'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { createServer } from '../../actors/server.ts'
import { streamableHttp } from '../../transports/streamable-http.ts'
import { bearerAuth } from '../../auth/server.ts'
import { DPOP_DEFAULTS, type DpopOptions } from '../../auth/dpop.ts'
import { jwtVerifier } from '../../auth/verifiers.ts'
import { connectRedis, redisReplayCache, type RedisConnection } from '../../transports/redis.ts'
import { startRedis, type TestRedis } from '../helpers/redis-server.ts'
import { testIssuer, type TestIssuer } from './fixtures.ts'

/**
 * The DPoP replay cache gives each key (a proof's key thumbprint: one client's key, bound to its
 * token by the issuer) a share of its room, so one client flooding it with fresh proofs is refused
 * (429) while every other client's proofs still pass: over real HTTP, with the memory cache and
 * with the Redis cache on a real redis-server shared by two instances.
 */

const ISSUER = 'https://issuer.test'
/** The canonical URL of the MCP endpoint every instance serves (the one proofs name, whatever port they reach). */
const RESOURCE = 'https://mcp.example.test/mcp'

const cleanup: (() => Promise<void>)[] = []
afterEach(async () => { for (const close of cleanup.splice(0).reverse()) await close() })

let issuer: TestIssuer
let redisServer: TestRedis
let redis: RedisConnection
beforeAll(async () => {
  issuer = await testIssuer(ISSUER, RESOURCE)
  redisServer = await startRedis()
  redis = await connectRedis(redisServer.url)
}, 30_000)
afterAll(async () => {
  await redis?.close()
  await redisServer?.stop()
})

/** One instance: a server behind bearerAuth with `dpop` on its own real HTTP listener (default limits otherwise); resolves with its URL. */
async function instance(dpop: DpopOptions): Promise<string> {
  const mcp = createServer({ name: 'dpop-quota', version: '1' })
  const auth = bearerAuth({ resource: RESOURCE, authorizationServers: [ISSUER], verify: jwtVerifier({ issuer: ISSUER, jwks: issuer.jwks }), dpop })
  const http = streamableHttp({ auth })
  await mcp.listen(http)
  cleanup.push(() => mcp.close())
  return http.url!
}

/** A client's DPoP key, a token bound to it, and fresh proofs for POST /mcp. */
async function boundClient() {
  const key = await generateKeyPair('ES256', { extractable: true })
  const jwk: JWK = await exportJWK(key.publicKey)
  const token = await issuer.token({ cnf: { jkt: await calculateJwkThumbprint(jwk, 'sha256') } })
  const ath = createHash('sha256').update(token).digest('base64url')
  const proof = () => new SignJWT({ htm: 'POST', htu: RESOURCE, ath, jti: randomUUID() }).setProtectedHeader({ alg: 'ES256', typ: 'dpop+jwt', jwk }).setIssuedAt().sign(key.privateKey)
  return { token, proof }
}

type Client = Awaited<ReturnType<typeof boundClient>>

/**
 * POSTs a ping with the client's token and a fresh proof; resolves with the status and Retry-After.
 * Past authentication a ping without a session is 400 (Mcp-Session-Id is required), so 400 means
 * the proof was accepted; no session is made.
 */
async function send(url: string, client: Client): Promise<{ status: number; retryAfter: string | null }> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: `DPoP ${client.token}`, dpop: await client.proof() },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }),
  })
  await response.body?.cancel()
  return { status: response.status, retryAfter: response.headers.get('retry-after') }
}

const ACCEPTED = 400

describe('issue 20: one client can fill the DPoP replay cache', { timeout: 60_000 }, () => {
  it('gives each DPoP key 1,000 live proof ids of the 100,000 by default', () => {
    expect(DPOP_DEFAULTS).toMatchObject({ maxReplayEntries: 100_000, maxReplayEntriesPerKey: 1_000 })
  })

  it('refuses one key past its share with 429 and Retry-After, while another key still passes (memory cache)', async () => {
    const url = await instance({ maxReplayEntries: 30, maxReplayEntriesPerKey: 10 })
    const flooder = await boundClient()
    const other = await boundClient()
    for (let n = 0; n < 10; n++) expect((await send(url, flooder)).status).toBe(ACCEPTED)
    // Past its share every fresh proof of the key waits until its oldest id expires (iat + 300 s);
    // far more refusals than the address's failed-authentication budget (60): a 429 is not charged.
    for (let n = 0; n < 70; n++) {
      const refused = await send(url, flooder)
      expect(refused.status).toBe(429)
      expect(Number(refused.retryAfter)).toBeGreaterThan(200)
    }
    // The cache is not full for anyone else: another key's proofs pass, from the same address too.
    for (let n = 0; n < 10; n++) expect((await send(url, other)).status).toBe(ACCEPTED)
  })

  it('holds the share across instances that share the Redis replay cache, and another key still passes on both', async () => {
    const prefix = `dpop-quota-${randomUUID()}:`
    const a = await instance({ replayCache: redisReplayCache(redis, { prefix, maxEntriesPerKey: 10 }) })
    const b = await instance({ replayCache: redisReplayCache(redis, { prefix, maxEntriesPerKey: 10 }) })
    const flooder = await boundClient()
    const other = await boundClient()
    for (let n = 0; n < 10; n++) expect((await send(n % 2 === 0 ? a : b, flooder)).status).toBe(ACCEPTED)
    for (const url of [a, b]) {
      const refused = await send(url, flooder)
      expect(refused.status).toBe(429)
      expect(Number(refused.retryAfter)).toBeGreaterThan(200)
    }
    for (let n = 0; n < 5; n++) {
      expect((await send(a, other)).status).toBe(ACCEPTED)
      expect((await send(b, other)).status).toBe(ACCEPTED)
    }
    // Redis holds one sorted set per key, no larger than its share.
    const sizes = await redis.eval(`local sizes = {}
      for _, key in ipairs(redis.call('KEYS', ARGV[1])) do sizes[#sizes + 1] = redis.call('ZCARD', key) end
      return sizes`, { keys: [], arguments: [`${prefix}replay-quota:*`] }) as number[]
    expect(sizes.sort()).toEqual([10, 10])
  })

  it('refuses an id (full, 503) rather than write past a Redis at its maxmemory, the quota script included', async () => {
    const own = await startRedis()
    const connection = await connectRedis(own.url)
    try {
      const cache = redisReplayCache(connection, { prefix: 'oom:' })
      expect(await cache.remember('before', Date.now() + 60_000, 'key')).toEqual({ type: 'fresh' })
      const config = connection as unknown as { configSet(name: string, value: string): Promise<unknown> }
      await config.configSet('maxmemory-policy', 'noeviction')
      await config.configSet('maxmemory', '1')
      expect(await cache.remember('during', Date.now() + 60_000, 'key')).toEqual({ type: 'full', retryAfterMs: 5_000 })
      expect(await cache.remember('unkeyed', Date.now() + 60_000)).toEqual({ type: 'full', retryAfterMs: 5_000 })
      // What it holds still counts: a replay is refused as a replay.
      expect(await cache.remember('before', Date.now() + 60_000, 'key')).toEqual({ type: 'replayed' })
      await config.configSet('maxmemory', '0')
      expect(await cache.remember('during', Date.now() + 60_000, 'key')).toEqual({ type: 'fresh' })
    } finally {
      await connection.close()
      await own.stop()
    }
  })
})
