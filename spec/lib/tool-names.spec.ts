import { afterEach, describe, expect, it, vi } from 'vitest'
import { createServer as createHttpServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { lastValueFrom, toArray } from 'rxjs'
import { TOOL_NAME_MAX_LENGTH, ToolNameWarning, toolNameIssues } from '../../lib/tool-names.ts'
import { LocalErrorCode } from '../../lib/jsonrpc/errors.ts'
import { createServer } from '../../actors/server.ts'
import { connect } from '../../actors/client.ts'
import { InvalidToolError } from '../../actors/client/errors.ts'
import { streamableHttpClient } from '../../transports/http-client.ts'

describe('toolNameIssues', () => {
  it.each([
    ['getUser'], ['DATA_EXPORT_v2'], ['admin.tools.list'], ['a'], ['x'.repeat(128)], ['a-b_c.d'],
  ])('finds nothing in %s, a name SEP-986 gives as valid', name => {
    expect(toolNameIssues(name)).toEqual([])
  })

  it.each([
    ['get user', ['contains " " (tool names use only A-Z a-z 0-9 _ - .)']],
    ['a,b', ['contains "," (tool names use only A-Z a-z 0-9 _ - .)']],
    ['user/profile', ['contains "/" (tool names use only A-Z a-z 0-9 _ - .)']],
    ['météo', ['contains "é" (tool names use only A-Z a-z 0-9 _ - .)']],
    ['x'.repeat(129), ['is 129 characters long (at most 128)']],
    ['', ['is empty']],
    [`${'y'.repeat(130)} !`, ['is 132 characters long (at most 128)', 'contains " ", "!" (tool names use only A-Z a-z 0-9 _ - .)']],
  ])('names what %j breaks', (name, issues) => {
    expect(toolNameIssues(name)).toEqual(issues)
  })

  it('names at most five of the characters a name should not hold', () => {
    expect(toolNameIssues('a b,c!d?e#f$g')).toEqual(['contains " ", ",", "!", "?", "#" (tool names use only A-Z a-z 0-9 _ - .)'])
    expect(TOOL_NAME_MAX_LENGTH).toBe(128)
  })
})

describe('issue 20: tool names are only checked for emptiness', () => {
  afterEach(() => { vi.restoreAllMocks() })

  it('registers a name outside the SEP-986 SHOULDs and warns once through reportUnhandledError', () => {
    const reported: unknown[] = []
    const server = createServer({ name: 'names', version: '1' }, { reportUnhandledError: error => reported.push(error) })
    server.tool('search docs', {}, () => ({ content: [] }))
    server.tool('fine.name-1', {}, () => ({ content: [] }))
    expect(reported).toHaveLength(1)
    const warning = reported[0] as ToolNameWarning
    expect(warning).toBeInstanceOf(ToolNameWarning)
    expect({ code: warning.code, tool: warning.tool, issues: warning.issues }).toEqual({
      code: LocalErrorCode.ToolName, tool: 'search docs', issues: ['contains " " (tool names use only A-Z a-z 0-9 _ - .)'],
    })
    expect(warning.message).toBe('Tool "search docs" does not follow the MCP tool name rules (SEP-986): it contains " " (tool names use only A-Z a-z 0-9 _ - .)')
  })

  it('refuses what it cannot serve: an empty name, a name that is not a string, a second tool of one name', () => {
    const server = createServer({ name: 'names', version: '1' }, { reportUnhandledError: () => {} })
    expect(() => server.tool('', {}, () => ({ content: [] }))).toThrow(new TypeError('A tool needs a name'))
    expect(() => server.tool(7 as unknown as string, {}, () => ({ content: [] }))).toThrow(TypeError)
    server.tool('once', {}, () => ({ content: [] }))
    expect(() => server.tool('once', {}, () => ({ content: [] }))).toThrow('Tool "once" is already registered')
  })

  it('writes the warning with console.warn when the server has no reportUnhandledError', () => {
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {})
    const error = vi.spyOn(console, 'error').mockImplementation(() => {})
    createServer({ name: 'names', version: '1' }).tool('x'.repeat(129), {}, () => ({ content: [] }))
    expect(warn).toHaveBeenCalledWith(`[rxmcp] Tool "${'x'.repeat(64)}…" does not follow the MCP tool name rules (SEP-986): it is 129 characters long (at most 128)`)
    expect(error).not.toHaveBeenCalled()
  })

  it('the client, listing over real HTTP, leaves out nameless and repeated tools, warns once of bad names, and does not crash', async () => {
    const tools = [
      { name: 'good', inputSchema: { type: 'object' } },
      null,
      { inputSchema: { type: 'object' } },
      { name: 42, inputSchema: { type: 'object' } },
      { name: '', inputSchema: { type: 'object' } },
      { name: 'has space', inputSchema: { type: 'object' } },
      { name: 'good', description: 'a second "good" from the same server', inputSchema: { type: 'object' } },
    ]
    const http: Server = createHttpServer((req, res) => {
      let text = ''
      req.on('data', chunk => { text += chunk })
      req.on('end', () => {
        const body = JSON.parse(text) as { id?: number; method: string }
        if (body.id === undefined) { res.writeHead(202).end(); return }
        const result = body.method === 'server/discover'
          ? { resultType: 'complete', supportedVersions: ['2026-07-28'], capabilities: { tools: {} }, _meta: { 'io.modelcontextprotocol/serverInfo': { name: 'odd', version: '1' } } }
          : body.method === 'tools/list' ? { resultType: 'complete', tools } : { resultType: 'complete', content: [] }
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id: body.id, result }))
      })
    })
    await new Promise<void>(resolve => http.listen(0, '127.0.0.1', resolve))
    try {
      const reported: unknown[] = []
      const client = await connect(streamableHttpClient(`http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`), { name: 'lister', version: '1' },
        { reportUnhandledError: error => reported.push(error) })
      const listed = await client.listTools()
      expect(listed.tools.map(tool => tool.name)).toEqual(['good', 'has space'])
      expect(listed.tools[0]).toEqual(tools[0])
      expect((await lastValueFrom(client.tools().pipe(toArray()))).map(tool => tool.name)).toEqual(['good', 'has space'])
      const invalid = reported.filter(error => error instanceof InvalidToolError) as InvalidToolError[]
      const perListing = [...Array(4).fill('it has no name (a non-empty string)'), 'another tool of the same name is listed before it (tool names are unique within a server)']
      expect(invalid.map(error => error.reason)).toEqual([...perListing, ...perListing])
      const warnings = reported.filter(error => error instanceof ToolNameWarning) as ToolNameWarning[]
      expect(warnings.map(warning => warning.tool)).toEqual(['has space'])
      // The tool with the odd name is still callable.
      expect(await client.callTool('has space')).toEqual({ content: [] })
      await client.close()
    } finally {
      await new Promise<void>(resolve => { http.closeAllConnections(); http.close(() => resolve()) })
    }
  })
})
