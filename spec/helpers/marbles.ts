import { TestScheduler } from 'rxjs/testing'
import { expect } from 'vitest'

/** A TestScheduler whose assertions are vitest's deep equality. */
export function createTestScheduler(): TestScheduler {
  return new TestScheduler((actual, expected) => expect(actual).toEqual(expected))
}
