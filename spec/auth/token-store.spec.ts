import { lstatSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { fileTokenStore, type TokenSet } from '../../auth/client.ts'

const tokens: TokenSet = { accessToken: 'a', tokenType: 'bearer', refreshToken: 'r', issuer: 'https://as', clientId: 'c' }
let dir: string

beforeEach(() => { dir = mkdtempSync(join(tmpdir(), 'rxmcp-token-store-')) })
afterEach(() => { rmSync(dir, { recursive: true, force: true }) })

describe('issue 20: the token store writes through a planted symlink at its predictable temp name', () => {
  it('leaves the targets of symlinks planted at guessable temporary names untouched', async () => {
    const path = join(dir, 'tokens.json')
    const victim = join(dir, 'victim.txt')
    writeFileSync(victim, 'precious', { mode: 0o644 })
    // The name the store used to write to, and other names an attacker could guess.
    const planted = [`${path}.${process.pid}.tmp`, `${path}.tmp`, `${path}~`, `${path}.new`]
    for (const name of planted) symlinkSync(victim, name)

    const store = fileTokenStore(path)
    await store.set('https://mcp.example/mcp', tokens)
    await store.set('https://other.example/mcp', { ...tokens, accessToken: 'b' })

    expect(readFileSync(victim, 'utf8')).toBe('precious')
    expect(statSync(victim).mode & 0o777).toBe(0o644)
    for (const name of planted) expect(lstatSync(name).isSymbolicLink()).toBe(true)
    // The store is a regular file of its own, owner-only, holding both entries; no temporary file is left.
    expect(lstatSync(path).isFile()).toBe(true)
    expect(statSync(path).mode & 0o777).toBe(0o600)
    expect(await store.get('https://mcp.example/mcp')).toEqual(tokens)
    expect((await store.get('https://other.example/mcp'))?.accessToken).toBe('b')
    expect(readdirSync(dir).sort()).toEqual(['tokens.json', ...planted.map(name => name.slice(dir.length + 1)), 'victim.txt'].sort())
  })

  it('replaces a symlink planted at the store\'s own path instead of writing through it', async () => {
    const path = join(dir, 'tokens.json')
    const victim = join(dir, 'victim.txt')
    writeFileSync(victim, '{}')
    symlinkSync(victim, path)
    await fileTokenStore(path).set('k', tokens)
    expect(readFileSync(victim, 'utf8')).toBe('{}')
    expect(lstatSync(path).isFile()).toBe(true)
    expect(statSync(path).mode & 0o777).toBe(0o600)
  })
})
