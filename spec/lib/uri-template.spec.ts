import { describe, expect, it } from 'vitest'
import fc from 'fast-check'
import { MAX_MATCH_LENGTH, countMatchSteps, isUriTemplate, uriTemplate } from '../../lib/uri-template.ts'

// The example variables of RFC 6570 section 3.2.
const values = {
  count: ['one', 'two', 'three'], dom: ['example', 'com'], dub: 'me/too', hello: 'Hello World!', half: '50%',
  var: 'value', who: 'fred', base: 'http://example.com/home/', path: '/foo/bar', list: ['red', 'green', 'blue'],
  v: '6', x: '1024', y: '768', empty: '', undef: undefined,
}

describe('uriTemplate', () => {
  it.each([
    // Level 1 and 2
    ['{var}', 'value'], ['{hello}', 'Hello%20World%21'], ['{half}', '50%25'], ['O{empty}X', 'OX'], ['O{undef}X', 'OX'],
    ['{+var}', 'value'], ['{+hello}', 'Hello%20World!'], ['{+path}/here', '/foo/bar/here'], ['{+base}index', 'http://example.com/home/index'],
    ['{#var}', '#value'], ['{#hello}', '#Hello%20World!'],
    // Level 3
    ['map?{x,y}', 'map?1024,768'], ['{x,hello,y}', '1024,Hello%20World%21,768'], ['{+x,hello,y}', '1024,Hello%20World!,768'],
    ['{+path,x}/here', '/foo/bar,1024/here'], ['{#x,hello,y}', '#1024,Hello%20World!,768'], ['X{.var}', 'X.value'], ['X{.x,y}', 'X.1024.768'],
    ['{/var}', '/value'], ['{/var,x}/here', '/value/1024/here'], ['{;x,y}', ';x=1024;y=768'], ['{;x,y,empty}', ';x=1024;y=768;empty'],
    ['{?x,y}', '?x=1024&y=768'], ['{?x,y,empty}', '?x=1024&y=768&empty='], ['?fixed=yes{&x}', '?fixed=yes&x=1024'], ['{&x,y,empty}', '&x=1024&y=768&empty='],
    // Level 4
    ['{var:3}', 'val'], ['{var:30}', 'value'], ['{list}', 'red,green,blue'], ['{list*}', 'red,green,blue'], ['{+path:6}/here', '/foo/b/here'],
    ['{#path:6}/here', '#/foo/b/here'], ['X{.list}', 'X.red,green,blue'], ['X{.list*}', 'X.red.green.blue'], ['{/list*}', '/red/green/blue'],
    ['{/list*,path:4}', '/red/green/blue/%2Ffoo'], ['{;list}', ';list=red,green,blue'], ['{;list*}', ';list=red;list=green;list=blue'],
    ['{?list}', '?list=red,green,blue'], ['{?list*}', '?list=red&list=green&list=blue'], ['{&list*}', '&list=red&list=green&list=blue'],
    ['{count}', 'one,two,three'], ['{count*}', 'one,two,three'], ['{/count*}', '/one/two/three'], ['{;count*}', ';count=one;count=two;count=three'],
    ['{?count*}', '?count=one&count=two&count=three'], ['{+dub}', 'me/too'], ['{dub}', 'me%2Ftoo'],
  ])('expands %s to %s (RFC 6570 examples)', (template, expected) => {
    expect(uriTemplate(template).expand(values)).toBe(expected)
  })

  it.each([
    ['users://{id}/profile', 'users://42/profile', { id: '42' }],
    ['file:///{+path}', 'file:///a/b/c.txt', { path: 'a/b/c.txt' }],
    ['search://q{?query,limit}', 'search://q?limit=5&query=rx%20mcp', { query: 'rx mcp', limit: '5' }],
    ['search://q{?query,limit}', 'search://q?query=x&other=1', { query: 'x' }],
    ['search://q{?query,limit}', 'search://q', {}],
    ['doc://{name}{#section}', 'doc://intro#part-2', { name: 'intro', section: 'part-2' }],
    ['repo://{owner}/{repo}{/path*}', 'repo://rx/mcp/src/lib', { owner: 'rx', repo: 'mcp', path: ['src', 'lib'] }],
    ['img://{name}{.ext}', 'img://logo.png', { name: 'logo', ext: 'png' }],
    ['m://x{;a,b}', 'm://x;a=1;b=2', { a: '1', b: '2' }],
    ['items://{id}', 'items://caf%C3%A9', { id: 'café' }],
  ])('matches %s against %s', (template, uri, expected) => {
    expect(uriTemplate(template).match(uri)).toEqual(expected)
  })

  it.each([
    ['users://{id}/profile', 'users://42/settings'],
    ['users://{id}/profile', 'users://4/2/profile'],
    ['users://{id}', 'other://42'],
    ['items://{id}', 'items://%E0%A4%A'],
  ])('does not match %s against %s', (template, uri) => {
    expect(uriTemplate(template).match(uri)).toBeUndefined()
  })

  it('lists its variable names', () => {
    expect(uriTemplate('a://{x}/{+y}{?p,q}').variableNames).toEqual(['x', 'y', 'p', 'q'])
    expect(isUriTemplate('a://{x}')).toBe(true)
    expect(isUriTemplate('a://x')).toBe(false)
  })

  it.each(['a://{x', 'a://x}', 'a://{}', 'a://{x y}', 'a://{x:0}'])('throws TypeError for the malformed template %s', template => {
    expect(() => uriTemplate(template)).toThrow(TypeError)
  })

  it('reads back what it expanded', () => {
    const simple = fc.string({ minLength: 1, maxLength: 20 })
    fc.assert(fc.property(simple, simple, simple, (id, path, q) => {
      const template = uriTemplate('x://{id}/files/{+path}{?q}')
      // A slash in {id} is expanded to %2F, which {id} refuses to match (see below).
      const uri = template.expand({ id: id.replaceAll('/', ''), path: path.replace(/[?#%]/g, ''), q })
      const matched = template.match(uri)
      expect(matched).toBeDefined()
      expect(matched!.id).toBe(id.replaceAll('/', ''))
      expect(matched!.q).toBe(q)
    }), { numRuns: 300 })
  })

  it('refuses URIs that fail adversarially without scanning them more than linearly', () => {
    const template = uriTemplate('x://{a}/{b}/{c}{?q}')
    expect(template.match('x://' + 'a/'.repeat(30_000) + '!')).toBeUndefined()
    expect(template.match('x://a/b/' + 'c'.repeat(60_000) + '?q=1')).toEqual({ a: 'a', b: 'b', c: 'c'.repeat(60_000), q: '1' })
  })

  // A backtracking RegExp tries O(n^2) splits for these; the VM visits each position a bounded number of times.
  it.each([
    ['{+a}/{+b}', (n: number) => '/'.repeat(n) + '?'],
    ['{a}{b}', (n: number) => 'a'.repeat(n) + '/'],
    ['{+a}{+b}{+c}', (n: number) => 'a'.repeat(n) + '#'],
    ['x://{a}/{b}/{c}{?q}', (n: number) => 'x://' + 'a/'.repeat(n / 2) + '!'],
    ['{/a*}{/b*}', (n: number) => '/x'.repeat(n / 2) + '?'],
    ['{#a,b}', (n: number) => '#' + ','.repeat(n)],
  ])('matches %s in steps linear in the URI length', (template, uri) => {
    const small = countMatchSteps(template, uri(1000))
    const large = countMatchSteps(template, uri(16_000))
    // At most two visits per instruction per position, and the cost per character does not grow.
    expect(large.steps).toBeLessThanOrEqual(2 * (uri(16_000).length + 1) * large.instructions)
    expect(large.steps / uri(16_000).length).toBeLessThanOrEqual(small.steps / uri(1000).length * 1.01 + 1)
  })

  it(`matches nothing longer than ${MAX_MATCH_LENGTH} characters`, () => {
    const template = uriTemplate('file:///{+path}')
    expect(template.match('file:///' + 'a'.repeat(MAX_MATCH_LENGTH - 8))).toEqual({ path: 'a'.repeat(MAX_MATCH_LENGTH - 8) })
    expect(template.match('file:///' + 'a'.repeat(MAX_MATCH_LENGTH))).toBeUndefined()
  })

  it('reads a long repeated exploded query parameter in place', () => {
    const uri = 'q://x?v=' + Array.from({ length: 5000 }, (_, i) => i).join('&v=')
    expect(uriTemplate('q://x{?v*}').match(uri)!.v).toHaveLength(5000)
  })

  describe('an encoded slash', () => {
    it.each([
      ['files://{name}', 'files://..%2F..%2Fetc%2Fpasswd'],
      ['files://{name}', 'files://a%2fb'],
      ['img://{name}{.ext}', 'img://logo.p%2Fng'],
      ['repo://x{/path*}', 'repo://x/a%2Fb/c'],
      ['repo://x{/seg}', 'repo://x/a%2Fb'],
      ['m://x{;a}', 'm://x;a=1%2F2'],
    ])('never matches %s (%s): such a value cannot hold a /', (template, uri) => {
      expect(uriTemplate(template).match(uri)).toBeUndefined()
    })

    it.each([
      ['files://{+path}', 'files://a%2Fb/c', { path: 'a/b/c' }],
      ['doc://x{#section}', 'doc://x#a%2Fb', { section: 'a/b' }],
      ['search://q{?query}', 'search://q?query=a%2Fb', { query: 'a/b' }],
    ])('decodes in %s, whose values may hold slashes anyway', (template, uri, expected) => {
      expect(uriTemplate(template).match(uri)).toEqual(expected)
    })

    it('is what {id} expands a slash to, which it then does not match back', () => {
      const template = uriTemplate('users://{id}')
      expect(template.expand({ id: 'a/b' })).toBe('users://a%2Fb')
      expect(template.match('users://a%2Fb')).toBeUndefined()
    })
  })
})
