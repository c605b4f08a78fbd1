import { execFile } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { describe, expect, it, vi } from 'vitest'
import * as yaml from 'yaml'
import fc from 'fast-check'
import { FRONTMATTER_LIMITS, parseYamlBlock, readFrontmatter } from '../../lib/frontmatter.ts'

describe('readFrontmatter', () => {
  it('reads a skill manifest: scalars, quotes, a nested map, lists, block scalars, comments', async () => {
    const text = [
      '---',
      'name: pdf-processing',
      'description: "Extract text: fill forms, and merge PDFs"',
      "license: 'Apache-2.0'",
      'version: 2',
      'beta: true',
      'nothing: ~',
      '# a comment',
      'metadata:',
      '  author: ada',
      '  tags: [pdf, forms]',
      'allowed-tools:',
      '  - Read',
      '  - Bash(python:*)',
      'notes: |',
      '  line one',
      '  line two',
      'summary: >-',
      '  folded',
      '  text',
      '---',
      '# Body',
      '',
    ].join('\n')
    expect(await readFrontmatter(text)).toEqual({
      data: {
        name: 'pdf-processing', description: 'Extract text: fill forms, and merge PDFs', license: 'Apache-2.0', version: 2, beta: true, nothing: null,
        metadata: { author: 'ada', tags: ['pdf', 'forms'] }, 'allowed-tools': ['Read', 'Bash(python:*)'], notes: 'line one\nline two\n', summary: 'folded text',
      },
      body: '# Body\n',
    })
  })

  it('reads a sequence of mappings and a sequence at its key\'s indentation', async () => {
    expect(await parseYamlBlock('items:\n- a: 1\n  b: two\n- c: 3')).toEqual({ items: [{ a: 1, b: 'two' }, { c: 3 }] })
  })

  it('has none without the opening line, or without the closing one', async () => {
    expect(await readFrontmatter('# Title\n---\nname: x\n---\n')).toBeUndefined()
    expect(await readFrontmatter('---\nname: x\n')).toBeUndefined()
    expect(await readFrontmatter('---\n---\nbody')).toEqual({ data: {}, body: 'body' })
    expect(await readFrontmatter('\uFEFF---\r\nname: x\r\n---\r\nbody')).toEqual({ data: { name: 'x' }, body: 'body' })
  })

  it('refuses what it does not read rather than guessing: anchors, tags, flow maps, bad indentation, duplicates', async () => {
    for (const block of ['a: &x 1', 'a: !!str 1', 'a: {b: 1}', 'a: 1\n   b: 2', 'a: 1\na: 2', '__proto__: 1', '- just a list', 'a: "unclosed']) {
      expect(await parseYamlBlock(block), block).toBeUndefined()
    }
  })

  it.each([
    ['an alias', 'a: &x 1\nb: *x'],
    ['a local tag', 'a: !custom 1'],
    ['the non-specific tag', 'a: ! 1'],
    ['a tag on a key', '!!str a: 1'],
    ['a flow mapping inside a flow sequence', 'a: [{b: 1}]'],
    ['a single-pair flow mapping', 'a: [b: 1]'],
    ['a collection as a key', '? [a]\n: b'],
    ['an empty key', ': x'],
    ['a quoted key equal to a plain one', '"a": 1\na: 2'],
    ['a number key equal to a string one', '1: a\n"1": b'],
    ['a nested __proto__ key', 'a:\n  - __proto__: 1'],
    ['a tab as indentation', 'a:\n\tb: 1'],
    ['a second document', 'a: 1\n...\nb: 2'],
    ['a directive', '%YAML 1.2\na: 1'],
    ['a number JSON cannot carry', 'a: 1e999'],
    ['a scalar root', 'just text'],
  ])('refuses %s', async (_, block) => {
    expect(await parseYamlBlock(block)).toBeUndefined()
  })

  it('refuses an alias bomb (billion laughs) without expanding it', async () => {
    const levels = ['a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]']
    for (let level = 1; level <= 9; level++) levels.push(`a${level}: &a${level} [${Array(10).fill(`*a${level - 1}`).join(', ')}]`)
    const started = performance.now()
    expect(await readFrontmatter(`---\nname: lol\n${levels.join('\n')}\n---\n`)).toBeUndefined()
    // Expanded, the last level is 10^9 strings: this could only finish in time unexpanded.
    expect(performance.now() - started).toBeLessThan(2_000)
  })

  it('refuses a block over maxLength characters before parsing it, and reads one at it', async () => {
    const at = `a: ${'x'.repeat(FRONTMATTER_LIMITS.maxLength - 3)}`
    expect(at).toHaveLength(FRONTMATTER_LIMITS.maxLength)
    expect(await parseYamlBlock(at)).toEqual({ a: 'x'.repeat(FRONTMATTER_LIMITS.maxLength - 3) })
    expect(await parseYamlBlock(`${at}x`)).toBeUndefined()
  })

  it('reads collections nested maxDepth deep and refuses one more', async () => {
    const nested = (depth: number) => `a: ${'['.repeat(depth)}${']'.repeat(depth)}`
    let expected: unknown = []
    for (let depth = 1; depth < FRONTMATTER_LIMITS.maxDepth; depth++) expected = [expected]
    expect(await parseYamlBlock(nested(FRONTMATTER_LIMITS.maxDepth))).toEqual({ a: expected })
    expect(await parseYamlBlock(nested(FRONTMATTER_LIMITS.maxDepth + 1))).toBeUndefined()
    expect(await parseYamlBlock(`a:\n${Array.from({ length: FRONTMATTER_LIMITS.maxDepth + 1 }, (_, depth) => `${' '.repeat(depth)}- `).join('\n')}x`)).toBeUndefined()
  })

  it('refuses nesting as deep as the size bound allows before yaml composes it', async () => {
    // yaml composes recursively: this deep, it overflows the stack, and an overflow that lands in
    // V8's regexp compiler ends the process (a fatal error, not an exception).
    const compose = vi.spyOn(yaml.Composer.prototype, 'compose')
    try {
      for (const block of [`a: ${'['.repeat(FRONTMATTER_LIMITS.maxLength - 3)}`, '- '.repeat(FRONTMATTER_LIMITS.maxLength / 2), '? '.repeat(FRONTMATTER_LIMITS.maxLength / 2)]) {
        expect(await parseYamlBlock(block), block.slice(0, 10)).toBeUndefined()
      }
      expect(compose).not.toHaveBeenCalled()
      expect(await parseYamlBlock('a: [[1]]')).toEqual({ a: [[1]] })
      expect(compose).toHaveBeenCalledOnce()
    } finally {
      compose.mockRestore()
    }
  })

  it('reads plain scalars as before: hexadecimal, octal, infinities and NaN stay strings; keys stay as written', async () => {
    expect(await parseYamlBlock('hex: 0x1F\noctal: 0o17\ninf: .inf\nnan: .NaN\nint: 007\nfloat: 1.5e3\nyes: yes\nTrue: True\nnull: ~\n1.0: one')).toEqual({
      hex: '0x1F', octal: '0o17', inf: '.inf', nan: '.NaN', int: 7, float: 1500, yes: 'yes', True: true, null: null, '1.0': 'one',
    })
  })

  it('reads YAML the old hand-written subset refused', async () => {
    expect(await parseYamlBlock([
      'description: a long description',
      '  continued on a second line',
      'escaped: "\\x41\\u00e9\\t"',
      'kept: |+',
      '  text',
      '',
      'indented: |2',
      '   one more space',
      'key:with-colon: v',
      '? explicit',
      ': key',
      'ended: true',
      '...',
    ].join('\n'))).toEqual({
      description: 'a long description continued on a second line', escaped: 'Aé\t', kept: 'text\n\n', indented: ' one more space\n',
      'key:with-colon': 'v', explicit: 'key', ended: true,
    })
  })

  it('never throws, whatever the text', async () => {
    await fc.assert(fc.asyncProperty(fc.string({ maxLength: 300 }), async text => {
      await readFrontmatter(`---\n${text}\n---\n`)
      await parseYamlBlock(text)
    }), { numRuns: 500 })
  })

  it('round-trips plain string maps', async () => {
    const key = fc.stringMatching(/^[a-z][a-z0-9-]{0,10}$/)
    const value = fc.stringMatching(/^[A-Za-z][A-Za-z0-9 .,-]{0,30}[A-Za-z0-9]$/).filter(v => !/^(true|false|null|True|False|TRUE|FALSE|Null|NULL)$/.test(v))
    await fc.assert(fc.asyncProperty(fc.dictionary(key, value, { maxKeys: 6 }), async map => {
      const block = Object.entries(map).map(([k, v]) => `${k}: ${JSON.stringify(v)}`).join('\n')
      expect(await parseYamlBlock(block)).toEqual(map)
    }), { numRuns: 200 })
  })

  it('loads yaml on the first read, not with the entry points nor for a plain stdio server and client', async () => {
    const root = fileURLToPath(new URL('../../', import.meta.url))
    const child = [
      "import { createRequire } from 'node:module'",
      'const require = createRequire(import.meta.url)',
      "const isYamlLoaded = () => Object.keys(require.cache).some(path => /[\\\\/]node_modules[\\\\/]yaml[\\\\/]/.test(path))",
      "const rxmcp = await import('./index.ts')",
      "await import('./browser.ts')",
      "const skills = await import('./entries/skills.ts')",
      "const { PassThrough } = await import('node:stream')",
      'const [toServer, toClient] = [new PassThrough(), new PassThrough()]',
      "const server = rxmcp.createServer({ name: 'plain', version: '1' })",
      "server.tool('echo', { inputSchema: { type: 'object' } }, () => ({ content: [{ type: 'text', text: 'hi' }] }))",
      'await server.listen(rxmcp.stdio({ input: toServer, output: toClient }))',
      "const client = await rxmcp.connect(rxmcp.stdio({ input: toClient, output: toServer }), { name: 'plain-client', version: '1' })",
      "const called = await client.callTool('echo', {})",
      'const before = isYamlLoaded()',
      "const read = await skills.readFrontmatter('---\\nname: x\\n---\\n')",
      'console.log(JSON.stringify({ text: called.content[0].text, before, read: read?.data, after: isYamlLoaded() }))',
      'process.exit(0)',
    ].join('\n')
    const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', child], { cwd: root })
    expect(JSON.parse(stdout)).toEqual({ text: 'hi', before: false, read: { name: 'x' }, after: true })
  }, 30_000)
})
