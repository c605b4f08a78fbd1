/**
 * The contract of where a server remembers the MRTR `requestState`s already used: a leaf of lib/,
 * because the server (actors/) asks it and the stores live on both sides (in memory in actors/,
 * in Redis in transports/).
 */

/**
 * Where a server remembers the `requestState`s already used, so that each continues its request
 * at most once (MCP 2026-07-28 MRTR: "servers for which a given requestState must be consumed at
 * most once MUST enforce that invariant server-side"). The default keeps them in the process
 * (`memoryRequestStateStore`); instances behind one load balancer that share a `requestStateKey`
 * share one store too, or a state can be used once on each of them: `redisRequestStateStore` of
 * `rxmcp/transports/redis` (which `redisScaleOut(url).server` gives).
 * @example
 * // Redis: the first SET of an id wins; the record goes when the state would expire anyway.
 * const store: RequestStateStore = {
 *   claim: async (id, expiresAt) => (await redis.set(`mcp:rs:${id}`, '1', { NX: true, PXAT: expiresAt })) === 'OK',
 * }
 */
export interface RequestStateStore {
  /**
   * Marks the state `id` used. True when this call used it first (the retry goes on), false when
   * it was used before (the retry is refused). `expiresAt` (ms since the epoch) is when the state
   * expires: the record is needed until then, and not after. A store that cannot tell (full,
   * unreachable) throws or rejects, and the retry is refused: never run twice.
   */
  claim(id: string, expiresAt: number): boolean | Promise<boolean>
}
