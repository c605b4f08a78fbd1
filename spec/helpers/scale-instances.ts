import { afterAll, afterEach, beforeAll } from 'vitest'
import type { McpServer } from '../../actors/server.ts'
import type { StreamableHttpServer } from '../../transports/streamable-http.ts'
import { redisScaleOut, type RedisScaleOut } from '../../transports/redis.ts'
import { startRedis, type TestRedis } from './redis-server.ts'

/** One instance of a scaled-out server: its Redis wiring, the server and its listener. */
export interface ScaleInstance { scale: RedisScaleOut; server: McpServer; http: StreamableHttpServer }

/**
 * Instances of one server on a real redis-server, as behind a balancer: registers the file's
 * hooks (one redis-server per file, every instance closed after each test) and returns `start`,
 * which wires one instance by `redisScaleOut` under `prefix` (instances with the same prefix share
 * everything) and listens with what `make` builds from it.
 */
export function useScaleOut(): { start(prefix: string, make: (scale: RedisScaleOut) => Omit<ScaleInstance, 'scale'>): Promise<ScaleInstance> } {
  let redis: TestRedis
  beforeAll(async () => { redis = await startRedis() }, 30_000)
  afterAll(async () => { await redis?.stop() })
  const instances: ScaleInstance[] = []
  afterEach(async () => {
    for (const instance of instances.splice(0)) {
      await instance.server.close().catch(() => {})
      await instance.http.close().catch(() => {})
      await instance.scale.close()
    }
  })
  return {
    async start(prefix, make) {
      const scale = await redisScaleOut(redis.url, { prefix })
      const instance = { scale, ...make(scale) }
      instances.push(instance)
      await instance.server.listen(instance.http)
      return instance
    },
  }
}

/** A raw POST to an instance, as a client sends it (JSON, both answer types accepted): status, headers, body text. */
export async function postTo(url: string, headers: Record<string, string>, body: unknown): Promise<{ status: number; headers: Headers; body: string }> {
  const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers }, body: JSON.stringify(body) })
  return { status: response.status, headers: response.headers, body: await response.text() }
}
