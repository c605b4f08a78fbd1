import { describe, expect, it } from 'vitest'
import { memoryReplayCache, MEMORY_REPLAY_CACHE_DEFAULTS } from '../../lib/replay-cache.ts'

/** A cache on a clock the test moves. */
function cache(maxEntries: number, maxEntriesPerKey?: number) {
  const clock = { now: 1_000_000 }
  return { clock, replays: memoryReplayCache({ maxEntries, now: () => clock.now, ...(maxEntriesPerKey === undefined ? {} : { maxEntriesPerKey }) }) }
}

describe('memoryReplayCache', () => {
  it('holds 100,000 ids by default, 1,000 of them per quota key', () => {
    expect(MEMORY_REPLAY_CACHE_DEFAULTS).toEqual({ maxEntries: 100_000, maxEntriesPerKey: 1_000 })
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
    expect(() => memoryReplayCache({ maxEntriesPerKey: 0 })).toThrow(RangeError)
  })

  it('refuses a key past its share as over-quota (until its soonest id expires), while other keys and unkeyed ids still pass', async () => {
    const { clock, replays } = cache(10, 2)
    expect((await replays.remember('a1', clock.now + 5_000, 'a')).type).toBe('fresh')
    expect((await replays.remember('a2', clock.now + 9_000, 'a')).type).toBe('fresh')
    expect(await replays.remember('a3', clock.now + 9_000, 'a')).toEqual({ type: 'over-quota', retryAfterMs: 5_000 })
    // A replay is still a replay, whatever the key's share.
    expect(await replays.remember('a1', clock.now + 5_000, 'a')).toEqual({ type: 'replayed' })
    expect((await replays.remember('b1', clock.now + 9_000, 'b')).type).toBe('fresh')
    expect((await replays.remember('free', clock.now + 9_000)).type).toBe('fresh')
    clock.now += 5_000
    expect((await replays.remember('a3', clock.now + 9_000, 'a')).type).toBe('fresh')
  })

  it('finds a key\'s expired ids behind other keys\' unexpired ones, at most once a second', async () => {
    const { clock, replays } = cache(10, 2)
    expect((await replays.remember('long', clock.now + 600_000, 'other')).type).toBe('fresh')
    expect((await replays.remember('a1', clock.now + 1_000, 'a')).type).toBe('fresh')
    expect((await replays.remember('a2', clock.now + 2_000, 'a')).type).toBe('fresh')
    expect(await replays.remember('a3', clock.now + 3_000, 'a')).toEqual({ type: 'over-quota', retryAfterMs: 1_000 })
    clock.now += 1_000
    // a1 expired behind 'long': the key's own search finds it.
    expect((await replays.remember('a3', clock.now + 3_000, 'a')).type).toBe('fresh')
    expect((await replays.remember('a1', clock.now + 3_000, 'a')).type).toBe('over-quota')
  })

  it('makes room in a full cache only by expiry, never by taking another key\'s share', async () => {
    const { clock, replays } = cache(3, 2)
    expect((await replays.remember('a1', clock.now + 1_000, 'a')).type).toBe('fresh')
    expect((await replays.remember('a2', clock.now + 1_000, 'a')).type).toBe('fresh')
    expect((await replays.remember('b1', clock.now + 1_000, 'b')).type).toBe('fresh')
    expect(await replays.remember('c1', clock.now + 1_000, 'c')).toEqual({ type: 'full', retryAfterMs: 1_000 })
    clock.now += 1_000
    expect((await replays.remember('c1', clock.now + 1_000, 'c')).type).toBe('fresh')
    expect((await replays.remember('a3', clock.now + 1_000, 'a')).type).toBe('fresh')
  })
})
