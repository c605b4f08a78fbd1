import type { RequestId } from './message.ts'

/** Makes request ids. Each call returns an id never returned before by the same generator. */
export type IdGenerator = () => RequestId

/**
 * A monotonic integer id generator, the default: ids are never reused in a session, as MCP requires.
 * @example
 * const nextId = createIdGenerator()
 * nextId() // 0, then 1, 2, ...
 */
export function createIdGenerator(start = 0): IdGenerator {
  // The next id to hand out; only ever grows.
  let next = start
  return () => next++
}
