import { describe, expect, it } from 'vitest'
import fc from 'fast-check'
import { parseYamlBlock, readFrontmatter } from '../../lib/frontmatter.ts'

describe('readFrontmatter', () => {
  it('reads a skill manifest: scalars, quotes, a nested map, lists, block scalars, comments', () => {
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
    expect(readFrontmatter(text)).toEqual({
      data: {
        name: 'pdf-processing', description: 'Extract text: fill forms, and merge PDFs', license: 'Apache-2.0', version: 2, beta: true, nothing: null,
        metadata: { author: 'ada', tags: ['pdf', 'forms'] }, 'allowed-tools': ['Read', 'Bash(python:*)'], notes: 'line one\nline two\n', summary: 'folded text',
      },
      body: '# Body\n',
    })
  })

  it('reads a sequence of mappings and a sequence at its key\'s indentation', () => {
    expect(parseYamlBlock('items:\n- a: 1\n  b: two\n- c: 3')).toEqual({ items: [{ a: 1, b: 'two' }, { c: 3 }] })
  })

  it('has none without the opening line, or without the closing one', () => {
    expect(readFrontmatter('# Title\n---\nname: x\n---\n')).toBeUndefined()
    expect(readFrontmatter('---\nname: x\n')).toBeUndefined()
    expect(readFrontmatter('---\n---\nbody')).toEqual({ data: {}, body: 'body' })
  })

  it('refuses what it does not read rather than guessing: anchors, tags, flow maps, bad indentation, duplicates', () => {
    for (const block of ['a: &x 1', 'a: !!str 1', 'a: {b: 1}', 'a: 1\n   b: 2', 'a: 1\na: 2', '__proto__: 1', '- just a list', 'a: "unclosed']) {
      expect(parseYamlBlock(block), block).toBeUndefined()
    }
  })

  it('never throws, whatever the text', () => {
    fc.assert(fc.property(fc.string({ maxLength: 300 }), text => {
      readFrontmatter(`---\n${text}\n---\n`)
      parseYamlBlock(text)
    }), { numRuns: 500 })
  })

  it('round-trips plain string maps', () => {
    const key = fc.stringMatching(/^[a-z][a-z0-9-]{0,10}$/)
    const value = fc.stringMatching(/^[A-Za-z][A-Za-z0-9 .,-]{0,30}[A-Za-z0-9]$/).filter(v => !/^(true|false|null|True|False|TRUE|FALSE|Null|NULL)$/.test(v))
    fc.assert(fc.property(fc.dictionary(key, value, { maxKeys: 6 }), map => {
      const block = Object.entries(map).map(([k, v]) => `${k}: ${JSON.stringify(v)}`).join('\n')
      expect(parseYamlBlock(block)).toEqual(map)
    }), { numRuns: 200 })
  })
})
