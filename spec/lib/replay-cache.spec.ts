import { describe, expect, it } from 'vitest'
import { memoryReplayCache, MEMORY_REPLAY_CACHE_DEFAULTS } from '../../lib/replay-cache.ts'

/** A cache on a clock the test moves. */
function cache(maxEntries: number) {
  const clock = { now: 1_000_000 }
  return { clock, replays: memoryReplayCache({ maxEntries, now: () => clock.now }) }
}

describe('memoryReplayCache', () => {
  it('holds 100,000 ids by default', () => {
    expect(MEMORY_REPLAY_CACHE_DEFAULTS.maxEntries).toBe(100_000)
  })

  it('says fresh once, then replayed until the id expires, then fresh again', async () => {
    const { clock, replays } = cache(10)
    expect(await replays.remember('a', clock.now + 1000)).toEqual({ type: 'fresh' })
    expect(await replays.remember('a', clock.now + 1000)).toEqual({ type: 'replayed' })
    clock.now += 999
    expect(await replays.remember('a', clock.now + 1000)).toEqual({ type: 'replayed' })
    clock.now += 1
    expect(await replays.remember('a', clock.now + 1000)).toEqual({ type: 'fresh' })
  })

  it('refuses a new id when full of unexpired ones instead of forgetting the oldest, and has room once they expire', async () => {
    const { clock, replays } = cache(3)
    const until = clock.now + 60_000
    for (const id of ['victim', 'b', 'c']) expect((await replays.remember(id, until)).type).toBe('fresh')
    for (let n = 0; n < 50; n++) expect(await replays.remember(`other-${n}`, until)).toEqual({ type: 'full', retryAfterMs: 60_000 })
    expect(await replays.remember('victim', until)).toEqual({ type: 'replayed' })
    clock.now = until
    expect((await replays.remember('d', clock.now + 1000)).type).toBe('fresh')
    expect((await replays.remember('victim', clock.now + 1000)).type).toBe('fresh')
  })

  it('finds expired ids behind an unexpired older one when full (expiries out of order)', async () => {
    const { clock, replays } = cache(3)
    expect((await replays.remember('long', clock.now + 600_000)).type).toBe('fresh')
    expect((await replays.remember('short-1', clock.now + 1000)).type).toBe('fresh')
    expect((await replays.remember('short-2', clock.now + 1000)).type).toBe('fresh')
    expect(await replays.remember('new', clock.now + 1000)).toEqual({ type: 'full', retryAfterMs: 1000 })
    clock.now += 1000
    expect((await replays.remember('new', clock.now + 1000)).type).toBe('fresh')
    expect((await replays.remember('long', clock.now + 1000)).type).toBe('replayed')
  })

  it('does not remember an id already past its time', async () => {
    const { clock, replays } = cache(1)
    expect((await replays.remember('old', clock.now)).type).toBe('fresh')
    expect((await replays.remember('kept', clock.now + 1)).type).toBe('fresh')
  })

  it('refuses a maximum below one', () => {
    expect(() => memoryReplayCache({ maxEntries: 0 })).toThrow(RangeError)
  })
})
