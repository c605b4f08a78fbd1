import { afterEach, expect } from 'vitest'

/**
 * What a spec file's tests leave to tear down, and the errors its servers report as unhandled:
 * after each test the cleanups run (last pushed first) and no unhandled error may have been
 * reported. Call once at the top of a file; push to the arrays it returns.
 */
export function cleanupsAfterEach(): { readonly cleanups: Array<() => unknown>; readonly unhandled: unknown[] } {
  const cleanups: Array<() => unknown> = []
  const unhandled: unknown[] = []
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
    expect(unhandled.splice(0)).toEqual([])
  })
  return { cleanups, unhandled }
}
