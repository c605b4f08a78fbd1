import { describe, expect, it } from 'vitest'
import { hashTag } from '../../transports/redis-like.ts'

/** What Redis Cluster takes as a key's hash tag: the text between its first `{` and the next `}` (empty: none). */
function tagOf(key: string): string | undefined {
  const open = key.indexOf('{')
  const close = open === -1 ? -1 : key.indexOf('}', open + 1)
  return close === -1 || close === open + 1 ? undefined : key.slice(open + 1, close)
}

describe('hashTag', () => {
  it.each([
    ['alice', '{alice}'],
    ['', '{%}'],
    ['a}b', '{a%7Db}'],
    ['50%', '{50%25}'],
    ['{x}', '{{x%7D}'],
    ['%7D', '{%257D}'],
  ])('tags %j as %s', (value, tag) => {
    expect(hashTag(value)).toBe(tag)
  })

  it('makes a real tag of its own for every value, and different values different tags', () => {
    const values = ['alice', '', 'a}b', 'a%7Db', '50%', '{x}', '}', '%', 'user:1', 'user:1}']
    const tags = values.map(value => tagOf(`rxmcp:task:${hashTag(value)}:id`))
    for (const tag of tags) expect(tag).toBeDefined()
    expect(new Set(tags).size).toBe(values.length)
  })
})
