/** The tests' redis-server: the cluster example's (one per test file, stopped after). */
export { startRedis } from '../../examples/cluster/spawn-redis.ts'
export type { StartRedisOptions, SpawnedRedis as TestRedis } from '../../examples/cluster/spawn-redis.ts'
/** A Redis Cluster of three primaries, and a primary + replica + Sentinel (issue 27). */
export { startRedisCluster, startRedisSentinel, redisCli, until } from './redis-topologies.ts'
export type { TestRedisCluster, TestRedisSentinel, RedisProcess } from './redis-topologies.ts'
