import { readFile } from 'node:fs/promises'
import { dirname, join, relative, resolve } from 'node:path'
import { describe, expect, it } from 'vitest'

const ROOT = resolve(import.meta.dirname, '../..')
const IMPORT = /(?:^|\n)\s*(?:import|export)\s[^'"]*?from\s+'([^']+)'|import\('([^']+)'\)/g

/** Every module `entry` reaches through its static and dynamic imports: repository files, and package names. */
async function reachable(entry: string): Promise<{ files: Set<string>; packages: Set<string> }> {
  const files = new Set<string>()
  const packages = new Set<string>()
  const queue = [resolve(ROOT, entry)]
  while (queue.length > 0) {
    const file = queue.pop()!
    if (files.has(file)) continue
    files.add(file)
    const source = await readFile(file, 'utf8')
    for (const match of source.matchAll(IMPORT)) {
      const specifier = match[1] ?? match[2]!
      if (specifier.startsWith('.')) queue.push(join(dirname(file), specifier))
      else packages.add(specifier.split('/')[0]!.startsWith('@') ? specifier.split('/').slice(0, 2).join('/') : specifier.split('/')[0]!)
    }
  }
  return { files, packages }
}

describe('what auth costs a program that does not use it', () => {
  it('the root entry, the server, the HTTP and WebSocket listeners never import jose, oauth4webapi, redis or auth/', async () => {
    for (const entry of ['index.ts', 'actors/server.ts', 'transports/streamable-http.ts', 'transports/websocket.ts', 'transports/stdio.ts']) {
      const { files, packages } = await reachable(entry)
      expect([...packages].filter(name => name === 'jose' || name === 'oauth4webapi' || name === 'redis'), entry).toEqual([])
      expect([...files].map(file => relative(ROOT, file)).filter(path => path.startsWith('auth/')), entry).toEqual([])
    }
  })

  it('rxmcp/auth brings jose for the resource server', async () => {
    const { packages } = await reachable('auth/index.ts')
    expect(packages.has('jose')).toBe(true)
  })
})
