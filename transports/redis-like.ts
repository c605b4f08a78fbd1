/*
 * The subset of a Redis client the stores use: a leaf, so each store and the entry that
 * assembles them (./redis.ts) import it, never each other.
 */

/** The commands the Redis stores send (node-redis v5 signatures, a subset). */
export interface RedisLike {
  get(key: string): Promise<string | null>
  set(key: string, value: string, options?: { PX?: number; PXAT?: number; KEEPTTL?: true; XX?: true; NX?: true }): Promise<string | null>
  del(keys: string | string[]): Promise<number>
  incr(key: string): Promise<number>
  expire(key: string, seconds: number): Promise<number | boolean>
  sAdd(key: string, members: string | string[]): Promise<number>
  sMembers(key: string): Promise<string[]>
  sIsMember(key: string, member: string): Promise<number | boolean>
  zAdd(key: string, members: { score: number; value: string } | { score: number; value: string }[]): Promise<number>
  zRem(key: string, members: string | string[]): Promise<number>
  zCard(key: string): Promise<number>
  zRangeByScore(key: string, min: number | string, max: number | string, options?: { LIMIT: { offset: number; count: number } }): Promise<string[]>
  zRemRangeByScore(key: string, min: number | string, max: number | string): Promise<number>
  zRangeByScoreWithScores(key: string, min: number | string, max: number | string, options?: { LIMIT: { offset: number; count: number } }): Promise<{ value: string; score: number }[]>
  mGet(keys: string[]): Promise<(string | null)[]>
  xAdd(key: string, id: string, message: Record<string, string>, options?: { TRIM: { strategy: 'MAXLEN'; strategyModifier?: '~' | '='; threshold: number } }): Promise<string>
  xRange(key: string, start: string, end: string, options?: { COUNT: number }): Promise<{ id: string; message: Record<string, string> }[]>
  eval(script: string, options: { keys: string[]; arguments: string[] }): Promise<unknown>
  quit?(): Promise<unknown>
  close?(): Promise<unknown>
}

/**
 * `value` as a Redis Cluster hash tag: `{...}` around it, so every key that holds the same tag is
 * on one slot and a script or multi-key command may use them together. A tag ends at its first
 * `}`, so `}` (and `%`, to keep the escape one-to-one) are escaped; `{}` (the empty value) would
 * be no tag at all, so the empty value is `{%}`, which no escaped value can be.
 */
export function hashTag(value: string): string {
  return value === '' ? '{%}' : `{${value.replaceAll('%', '%25').replaceAll('}', '%7D')}}`
}
