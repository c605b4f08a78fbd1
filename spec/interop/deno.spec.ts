/**
 * Issue 23: rxmcp on Deno, both ways. examples/deno/server.ts (the everything server through
 * webHandler under Deno.serve) runs as a real Deno child and is held to the everything contract
 * with the official SDK clients of both eras; examples/deno/client.ts (rxmcp's client on Deno)
 * drives the everything server on Node's listener in both eras and reports what it saw.
 *
 * Deno is the `deno` npm package's binary; its cache is a fresh temporary DENO_DIR, so every run
 * starts cold, as on a clean clone, and nothing is fetched (the children refuse remote modules).
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { request } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createEverythingServer } from '../../examples/everything/everything.ts'
import { runDenoClient, spawnDenoServer, type SpawnedDenoServer } from '../../examples/deno/spawn-deno.ts'
import { streamableHttp } from '../../transports/streamable-http.ts'
import { describeEverythingContract } from '../helpers/everything-contract.ts'

/** Bound on a Deno start: a cold cache transpiles rxmcp's sources (about 1 s here, 60 s allowed). */
const DENO_TIMEOUT_MS = 60_000

/** Deno's cache for this file's children, shared by them and removed after. */
let denoDir: string
beforeAll(async () => { denoDir = await mkdtemp(join(tmpdir(), 'rxmcp-deno-')) })
afterAll(async () => { await rm(denoDir, { recursive: true, force: true }) })

describe('examples/deno/server.ts', () => {
  let deno: SpawnedDenoServer
  beforeAll(async () => { deno = await spawnDenoServer({ denoDir }) }, DENO_TIMEOUT_MS)
  afterAll(async () => { await deno?.stop() })

  it('listens on 127.0.0.1 and refuses a Host that is not a loopback name (DNS rebinding)', async () => {
    expect(deno.url.hostname).toBe('127.0.0.1')
    // node:http, not fetch: fetch does not let a caller choose the Host header.
    const status = await new Promise<number | undefined>((resolve, reject) => {
      const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' })
      request(deno.url, { method: 'POST', headers: { host: 'attacker.example', 'content-type': 'application/json', accept: 'application/json, text/event-stream' } }, response => {
        response.resume()
        resolve(response.statusCode)
      }).on('error', reject).end(body)
    })
    expect(status).toBe(403)
  })

  describeEverythingContract('on Deno (Deno.serve and webHandler)', () => deno.url)

  // Declared last, so it runs after the contract: the SDK clients have closed their sessions.
  it('closes and exits 0 on SIGTERM', async () => {
    await deno.stop()
    expect(await deno.exited).toBe(0)
  })
})

describe('examples/deno/client.ts', () => {
  const server = createEverythingServer()
  const http = streamableHttp()
  beforeAll(async () => { await server.listen(http) })
  afterAll(async () => { await server.close() })

  it('runs rxmcp\'s client on Deno against the server on Node, in both eras', async () => {
    const summary = await runDenoClient(http.url!, { denoDir })
    const era = (name: 'legacy' | 'modern') => ({
      era: name,
      server: 'rxmcp-everything',
      tools: ['echo', 'add', 'long_running', 'sample', 'elicit', 'roots', 'log', 'fail', 'content_types', 'touch'],
      echo: `hi from ${name}`,
      progress: [1, 2, 3],
      longRunning: 'Finished 3 steps',
      asked: ['meaning?'],
      sample: 'deno-model: forty-two',
      elicit: { action: 'accept', content: { name: 'Deno', age: 6, color: 'red', extras: ['tea'] } },
    })
    expect(summary).toEqual({ deno: expect.stringMatching(/^2\.\d+\.\d+$/), legacy: era('legacy'), modern: era('modern') })
  }, DENO_TIMEOUT_MS)
})
