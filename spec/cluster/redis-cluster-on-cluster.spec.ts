import { startRedisCluster } from '../helpers/redis-server.ts'
import { scaleOutMatrix } from './scale-out-matrix.ts'

/**
 * Issue 27: issue 13's scale-out matrix (three instances behind nginx, our client and the official
 * SDK's) on a real Redis Cluster of three primaries: sessions' records and tasks spread over the
 * slots, the instances' channels and the event bus on sharded pub/sub.
 */
scaleOutMatrix(async () => {
  const cluster = await startRedisCluster()
  return { target: { cluster: cluster.urls }, stop: () => cluster.stop() }
})
