import { describe, expect, it } from 'vitest'
import { discardBody } from '../../../lib/http/discard-body.ts'

describe('discardBody', () => {
  it('cancels an unread body, and settles without rejecting when the cancel rejects (the request was aborted)', async () => {
    let cancelled = 0
    const aborted = new Response(new ReadableStream({ cancel: () => { cancelled++; throw new DOMException('The signal has been aborted', 'AbortError') } }))
    await expect(discardBody(aborted)).resolves.toBeUndefined()
    await expect(discardBody(new Response(new ReadableStream({ cancel: () => { cancelled++ } })))).resolves.toBeUndefined()
    await expect(discardBody(new Response(null))).resolves.toBeUndefined()
    expect(cancelled).toBe(2)
  })
})
