import { createHash, randomUUID } from 'node:crypto'
import { calculateJwkThumbprint, exportJWK, generateKeyPair, SignJWT, type JWK } from 'jose'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { createServer } from '../../actors/server.ts'
import { streamableHttp } from '../../transports/streamable-http.ts'
import { bearerAuth } from '../../auth/server.ts'
import { DPOP_DEFAULTS, type DpopOptions } from '../../auth/dpop.ts'
import { jwtVerifier } from '../../auth/verifiers.ts'
import { connectRedis, redisReplayCache, redisScaleOut, type RedisConnection } from '../../transports/redis.ts'
import { startRedis, type TestRedis } from '../helpers/redis-server.ts'
import { testIssuer, type TestIssuer } from './fixtures.ts'

const ISSUER = 'https://issuer.test'
/** The canonical URL of the MCP endpoint every instance serves (the one proofs name, whatever port they reach). */
const RESOURCE = 'https://mcp.example.test/mcp'
const INIT = { jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } }

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

/** One instance: a server behind bearerAuth (DPoP with `dpop`) on its own real HTTP listener; resolves with its URL. */
async function instance(dpop: DpopOptions, now?: () => number): Promise<string> {
  const mcp = createServer({ name: 'dpop', version: '1' })
  const auth = bearerAuth({ resource: RESOURCE, authorizationServers: [ISSUER], verify: jwtVerifier({ issuer: ISSUER, jwks: issuer.jwks }), dpop, ...(now === undefined ? {} : { now }) })
  const http = streamableHttp({ auth })
  await mcp.listen(http)
  cleanup.push(() => mcp.close())
  return http.url!
}

/** A client's DPoP key, a token bound to it, and fresh proofs for POST /mcp (dated `iatSec`, default now). */
async function boundClient() {
  const key = await generateKeyPair('ES256', { extractable: true })
  const jwk: JWK = await exportJWK(key.publicKey)
  const token = await issuer.token({ cnf: { jkt: await calculateJwkThumbprint(jwk, 'sha256') } })
  const ath = createHash('sha256').update(token).digest('base64url')
  const proof = (iatSec = Math.floor(Date.now() / 1000)) =>
    new SignJWT({ htm: 'POST', htu: RESOURCE, ath, jti: randomUUID() }).setProtectedHeader({ alg: 'ES256', typ: 'dpop+jwt', jwk }).setIssuedAt(iatSec).sign(key.privateKey)
  return { token, proof }
}

/** POSTs an initialize with the token and the proof; resolves with the status and Retry-After. */
async function send(url: string, token: string, proof: string): Promise<{ status: number; retryAfter: string | null }> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: `DPoP ${token}`, dpop: proof },
    body: JSON.stringify(INIT),
  })
  await response.body?.cancel()
  return { status: response.status, retryAfter: response.headers.get('retry-after') }
}

describe('issue 20: DPoP replay', { timeout: 30_000 }, () => {
  it('refuses a fresh proof with 503 and Retry-After when the replay cache is full, so a victim\'s proof never replays after many others', async () => {
    const url = await instance({ maxReplayEntries: 3 })
    const { token, proof } = await boundClient()
    const victim = await proof()
    expect(await send(url, token, victim)).toMatchObject({ status: 200 })
    // Two more fill the cache; past it every fresh proof waits, and no remembered one is forgotten.
    expect(await send(url, token, await proof())).toMatchObject({ status: 200 })
    expect(await send(url, token, await proof())).toMatchObject({ status: 200 })
    for (let n = 0; n < 10; n++) {
      const refused = await send(url, token, await proof())
      expect(refused.status).toBe(503)
      expect(Number(refused.retryAfter)).toBeGreaterThanOrEqual(1)
    }
    expect(await send(url, token, victim)).toMatchObject({ status: 401 })
  })

  it('drops expired proof ids, and remembers each until its iat plus the maximum age (a proof dated ahead, longer)', async () => {
    const clock = { now: Date.now() }
    const url = await instance({ maxReplayEntries: 2 }, () => clock.now)
    const { token, proof } = await boundClient()
    const nowSec = () => Math.floor(clock.now / 1000)
    const maxAge = DPOP_DEFAULTS.maxAgeSec
    const ahead = await proof(nowSec() + maxAge)
    const current = await proof(nowSec())
    expect(await send(url, token, ahead)).toMatchObject({ status: 200 })
    expect(await send(url, token, current)).toMatchObject({ status: 200 })
    expect(await send(url, token, await proof(nowSec()))).toMatchObject({ status: 503 })
    // Past the current proof's time: its id is dropped, the one dated ahead is still remembered.
    clock.now += (maxAge + 1) * 1000
    expect(await send(url, token, await proof(nowSec()))).toMatchObject({ status: 200 })
    expect(await send(url, token, ahead)).toMatchObject({ status: 401 })
  })

  it('refuses on instance B a proof used on instance A, when both share a Redis replay cache', async () => {
    // A's cache made by hand on one connection, B's by the scale-out on another: the same keys.
    const prefix = `dpop-${randomUUID()}:`
    const a = await instance({ replayCache: redisReplayCache(redis, { prefix }) })
    const scale = await redisScaleOut(redisServer.url, { prefix })
    cleanup.push(() => scale.close())
    const b = await instance({ replayCache: scale.dpopReplayCache })
    const { token, proof } = await boundClient()
    const used = await proof()
    expect(await send(a, token, used)).toMatchObject({ status: 200 })
    expect(await send(b, token, used)).toMatchObject({ status: 401 })
    expect(await send(a, token, used)).toMatchObject({ status: 401 })
    // A fresh proof is good on either.
    expect(await send(b, token, await proof())).toMatchObject({ status: 200 })
  })

  it('answers 503 when the Redis replay cache cannot be asked, never letting the proof through', async () => {
    const failing = redisReplayCache({ set: () => Promise.reject(new Error('connection lost')), eval: () => Promise.reject(new Error('connection lost')) })
    const url = await instance({ replayCache: failing })
    const { token, proof } = await boundClient()
    expect(await send(url, token, await proof())).toEqual({ status: 503, retryAfter: '5' })
  })
})
