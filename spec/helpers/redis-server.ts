/** The tests' redis-server: the cluster example's (one per test file, stopped after). */
export { startRedis } from '../../examples/cluster/spawn-redis.ts'
export type { StartRedisOptions, SpawnedRedis as TestRedis } from '../../examples/cluster/spawn-redis.ts'
