/**
 * The Redis Cluster slot of a key, computed here the way every cluster node does (CRC16-XMODEM of
 * the key, or of its hash tag, modulo 16,384), so a store can choose tags that land where it wants
 * in the slot space without asking the cluster.
 */

/** How many slots a Redis Cluster has: a fixed number, the same on every cluster. */
export const REDIS_CLUSTER_SLOTS = 16384

/** CRC16-XMODEM (polynomial 0x1021, initial 0) of each byte value, for {@link redisSlot}. */
const TABLE = (() => {
  const table = new Uint16Array(256)
  for (let byte = 0; byte < 256; byte++) {
    let crc = byte << 8
    for (let bit = 0; bit < 8; bit++) crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff
    table[byte] = crc
  }
  return table
})()

/**
 * The slot of `key` on a Redis Cluster (`CLUSTER KEYSLOT key`): when the key has a non-empty
 * `{...}` (its first `{` and the first `}` after it), only what is between them is hashed, as
 * Redis does. Keys are hashed as UTF-8.
 * @example
 * redisSlot('rxmcp:{events}:event-totals') === redisSlot('events')
 */
export function redisSlot(key: string): number {
  const open = key.indexOf('{')
  if (open !== -1) {
    const close = key.indexOf('}', open + 1)
    if (close > open + 1) key = key.slice(open + 1, close)
  }
  let crc = 0
  for (const byte of new TextEncoder().encode(key)) crc = ((crc << 8) & 0xffff) ^ TABLE[((crc >> 8) ^ byte) & 0xff]!
  return crc % REDIS_CLUSTER_SLOTS
}
