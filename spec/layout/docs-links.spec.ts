import { existsSync, readFileSync, readdirSync } from 'node:fs'
import { dirname, join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'

const root = fileURLToPath(new URL('../..', import.meta.url))

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens. */
function slug(heading: string): string {
  return heading.trim().toLowerCase().replace(/[^\w\- ]/g, '').replace(/ /g, '-')
}

/** The anchors of a Markdown file's headings (code fences skipped). */
function anchorsOf(text: string): Set<string> {
  const anchors = new Set<string>()
  let isFenced = false
  for (const line of text.split('\n')) {
    if (line.startsWith('```')) isFenced = !isFenced
    const heading = isFenced ? null : /^#{1,6} (.*)$/.exec(line)
    if (heading) anchors.add(slug(heading[1]!))
  }
  return anchors
}

/** Links of a Markdown file outside code fences: `[text](target)`. */
function linksOf(text: string): string[] {
  let isFenced = false
  const links: string[] = []
  for (const line of text.split('\n')) {
    if (line.startsWith('```')) isFenced = !isFenced
    if (!isFenced) for (const match of line.matchAll(/\]\(([^)\s]+)\)/g)) links.push(match[1]!)
  }
  return links
}

describe('issue 21: README is a front page, the guides live in docs/', () => {
  const files = ['README.md', 'CHANGELOG.md', ...readdirSync(join(root, 'docs')).filter(name => name.endsWith('.md')).map(name => `docs/${name}`)]

  it('keeps the front page short and the quick start in it', () => {
    const readme = readFileSync(join(root, 'README.md'), 'utf8')
    expect(readme.split('\n').length).toBeLessThan(400)
    expect(readme).toMatch(/## Quick start[\s\S]*npm install\nnpm start[^\n]*\nnpm test/)
    for (const guide of ['server', 'client', 'transports', 'http', 'auth', 'host', 'scale-out', 'errors', 'security']) {
      expect(existsSync(join(root, 'docs', `${guide}.md`)), guide).toBe(true)
      expect(readme).toContain(`docs/${guide}.md`)
    }
  })

  it('every relative link of README, CHANGELOG and the guides reaches a file, and its anchor a heading there', () => {
    const broken: string[] = []
    for (const file of files) {
      const text = readFileSync(join(root, file), 'utf8')
      for (const link of linksOf(text)) {
        if (/^(https?:|mailto:)/.test(link)) continue
        const [path, anchor] = link.split('#') as [string, string | undefined]
        const target = path === '' ? join(root, file) : join(root, dirname(file), path)
        if (!existsSync(target)) { broken.push(`${file}: ${link} (no ${relative(root, target)})`); continue }
        if (anchor !== undefined && target.endsWith('.md') && !anchorsOf(readFileSync(target, 'utf8')).has(anchor)) broken.push(`${file}: ${link} (no heading)`)
      }
    }
    expect(broken).toEqual([])
  })
})
