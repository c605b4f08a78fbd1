import { describe, expect, it } from 'vitest'
import fc from 'fast-check'
import { diffHostConfig, HostConfigError, parseHostConfig, redactExpansions } from '../../lib/host-config.ts'
import { MAX_TOOL_NAME, namespacedNames } from '../../lib/tool-names.ts'

function problemsOf(document: unknown, env: Record<string, string> = {}): readonly string[] {
  try {
    parseHostConfig(document, env)
  } catch (error) {
    expect(error).toBeInstanceOf(HostConfigError)
    return (error as HostConfigError).problems
  }
  throw new Error('the configuration was accepted')
}

describe('parseHostConfig', () => {
  it('reads stdio and remote entries, expands ${VAR} everywhere, and infers the transport', () => {
    const config = parseHostConfig({
      mcpServers: {
        files: { command: 'npx', args: ['-y', 'server-filesystem', '${HOME}/notes'], env: { TOKEN: '${SECRET}' }, cwd: '${HOME}', roots: ['${HOME}/notes'] },
        search: { url: 'https://search.example/mcp', headers: { Authorization: 'Bearer ${SECRET}' }, tools: { deny: ['drop'] }, timeout: 5000 },
        socket: { url: 'wss://ws.example/mcp' },
        legacy: { type: 'sse', url: 'http://127.0.0.1:9/sse', disabled: true },
        literal: { command: 'echo', args: ['$${HOME}'] },
      },
    }, { HOME: '/home/ann', SECRET: 's3' })
    expect(config.servers.get('files')).toMatchObject({ type: 'stdio', args: ['-y', 'server-filesystem', '/home/ann/notes'], env: { TOKEN: 's3' }, cwd: '/home/ann', roots: ['/home/ann/notes'] })
    expect(config.servers.get('search')).toMatchObject({ type: 'http', headers: { Authorization: 'Bearer s3' }, denyTools: ['drop'], allowTools: undefined, timeout: 5000 })
    expect(config.servers.get('socket')?.type).toBe('ws')
    expect(config.servers.get('legacy')).toMatchObject({ type: 'sse', disabled: true })
    expect(config.servers.get('literal')?.args).toEqual(['${HOME}'])
  })

  it('lists every problem, each naming the server and the field', () => {
    expect(problemsOf({ servers: {} })).toEqual(['the document needs an "mcpServers" object'])
    expect(problemsOf({
      mcpServers: {
        'bad name!': { command: 'x' },
        nocommand: { args: ['a'] },
        badurl: { type: 'http', url: 'ftp://x' },
        wsurl: { type: 'ws', url: 'http://x' },
        typo: { command: 'x', argz: [] },
        types: { command: 'x', args: 'not-a-list', timeout: -1, disabled: 'yes', tools: { allow: 'echo', block: [] } },
        unset: { command: '${NOPE}' },
        relative: { command: 'x', roots: ['notes'] },
      },
    })).toEqual([
      'mcpServers.bad name!: a server name is 1 to 32 letters, digits, "_" or "-"',
      'mcpServers.nocommand.command: a stdio server needs a command',
      'mcpServers.badurl.url: "ftp://x" is not a http(s) URL',
      'mcpServers.wsurl.url: "http://x" is not a ws(s) URL',
      'mcpServers.typo.argz: unknown field',
      'mcpServers.types.disabled: must be true or false',
      'mcpServers.types.timeout: must be a positive number of ms',
      'mcpServers.types.tools.block: unknown field (allow, deny)',
      'mcpServers.types.tools.allow: must be an array of strings',
      'mcpServers.types.args: must be an array of strings',
      'mcpServers.unset.command: ${NOPE} is not set',
      'mcpServers.relative.roots[0]: must be an absolute path',
    ])
  })

  it('diffs two configurations: added, removed, changed; disabled counts as absent', () => {
    const before = parseHostConfig({ mcpServers: { a: { command: 'a' }, b: { command: 'b' }, c: { command: 'c' }, d: { command: 'd', disabled: true } } })
    const after = parseHostConfig({ mcpServers: { a: { command: 'a' }, b: { command: 'b', args: ['--new'] }, d: { command: 'd' }, e: { url: 'http://127.0.0.1:1/mcp' } } })
    expect(diffHostConfig(before, after)).toEqual({ added: ['d', 'e'], removed: ['c'], changed: ['b'] })
  })
})

describe('namespacedNames', () => {
  it('prefixes with the server, sanitizes, keeps exact names, and hashes collisions and long names', () => {
    const names = namespacedNames([
      { server: 'fs', name: 'read_file' },
      { server: 'fs', name: 'read.file' },
      { server: 'web', name: 'get page' },
      { server: 'web', name: 'x'.repeat(80) },
    ])
    expect(names[0]).toBe('fs__read_file')
    expect(names[1]).toMatch(/^fs__read_file_[0-9a-f]{8}$/)
    expect(names[2]).toBe('web__get_page')
    expect(names[3]).toHaveLength(MAX_TOOL_NAME)
  })

  it('always gives distinct names that fit the LLM APIs, and the same pair the same name', () => {
    const entry = fc.record({ server: fc.stringMatching(/^[A-Za-z0-9_-]{1,32}$/), name: fc.string({ minLength: 1, maxLength: 100 }) })
    fc.assert(fc.property(fc.uniqueArray(entry, { selector: item => `${item.server}\u0000${item.name}`, maxLength: 30 }), entries => {
      const names = namespacedNames(entries)
      expect(new Set(names).size).toBe(entries.length)
      for (const name of names) expect(name).toMatch(/^[A-Za-z0-9_-]{1,64}$/)
      expect(namespacedNames([...entries].reverse())).toEqual([...names].reverse())
    }))
  })
})

describe('redactExpansions', () => {
  const config = parseHostConfig({
    mcpServers: {
      a: { command: 'run', args: ['${SHORT}', '${TOKEN}', '${LONGER}', '$${TOKEN}'], env: { KEY: '${TOKEN}' } },
      b: { url: 'https://example.com/mcp?key=${SPACED}' },
    },
  }, { SHORT: 'on', TOKEN: 'tok-123', LONGER: 'tok-123-and-more', SPACED: 'a b/c' })

  it('writes each expanded value back as its ${VAR}, the longest first, URL-encoded forms too', () => {
    expect(redactExpansions('ran with tok-123-and-more and tok-123', config)).toBe('ran with ${LONGER} and ${TOKEN}')
    expect(redactExpansions('GET https://example.com/mcp?key=a%20b%2Fc failed; a b/c', config)).toBe('GET https://example.com/mcp?key=${SPACED} failed; ${SPACED}')
  })

  it('leaves values shorter than 4 characters, and text no variable gave', () => {
    expect(redactExpansions('turned on: ${TOKEN} stays literal', config)).toBe('turned on: ${TOKEN} stays literal')
  })
})
