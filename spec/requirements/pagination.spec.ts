import { describe, expect, it } from 'vitest'
import { lastValueFrom, of, toArray } from 'rxjs'
import { paginate } from '../../lib/operators/paginate.ts'

describe('MCP 2026-07-28 pagination', () => {
  it('follows an empty-string cursor as a page, not as the end', async () => {
    // MCP 2026-07-28 pagination: "an empty string is a valid cursor and thus MUST NOT be treated as the end of results".
    const pages: Record<string, { items: string[]; nextCursor?: string }> = {
      start: { items: ['a'], nextCursor: '' },
      '': { items: ['b'], nextCursor: 'last' },
      last: { items: ['c'] },
    }
    const asked: (string | undefined)[] = []
    const items = await lastValueFrom(paginate(cursor => { asked.push(cursor); return of(pages[cursor ?? 'start']!) }).pipe(toArray()))
    expect(items).toEqual(['a', 'b', 'c'])
    expect(asked).toEqual([undefined, '', 'last'])
  })
})
