/**
 * Results shaped for the revision a session negotiated: a field a revision does not define is not
 * sent to a peer that speaks it (a 2024-11-05 client gets no `icons`, `outputSchema`, `execution`).
 * Driven by one table of the fields each revision added, read off the official schemas
 * (`schema/<revision>/schema.ts` in modelcontextprotocol/modelcontextprotocol).
 */
import type { JsonObject } from '../jsonrpc/message.ts'

/** The revision each field of a shape first appeared in; fields not named here are always sent. */
type Since = Readonly<Record<string, string>>

/** 2025-06-18 made names metadata (`title`) and added `_meta` on listed items; 2025-11-25 added `icons`. */
const LISTED: Since = { title: '2025-06-18', _meta: '2025-06-18', icons: '2025-11-25' }

/** The fields that came after 2024-11-05, per shape. */
export const FIELDS_SINCE = {
  tool: { ...LISTED, annotations: '2025-03-26', outputSchema: '2025-06-18', execution: '2025-11-25' },
  resource: LISTED,
  resourceTemplate: LISTED,
  prompt: LISTED,
  promptArgument: { title: '2025-06-18' },
  implementation: { title: '2025-06-18', icons: '2025-11-25', description: '2025-11-25', websiteUrl: '2025-11-25' },
  serverCapabilities: { completions: '2025-03-26', tasks: '2025-11-25' },
  callToolResult: { structuredContent: '2025-06-18' },
} as const satisfies Record<string, Since>

/** The newest revision any field of the table needs: sessions at or past it are sent results as they are. */
const NEWEST = '2025-11-25'

/**
 * The result of `method` as a peer of `version` may receive it. Returns `result` itself when
 * nothing needs to go (always at the newest revision, without looking at it); otherwise a copy
 * with the fields the revision does not define left out. Only the shapes named in
 * {@link FIELDS_SINCE} are walked, never whole results. Revisions are ISO dates and compare as strings.
 * @example
 * shapeResult('tools/list', { tools: [{ name: 'a', inputSchema, icons }] }, '2024-11-05') // no icons
 */
export function shapeResult(method: string, result: JsonObject, version: string): JsonObject {
  if (version >= NEWEST) return result
  switch (method) {
    case 'initialize': {
      const serverInfo = result.serverInfo as JsonObject | undefined
      const capabilities = result.capabilities as JsonObject | undefined
      const shapedInfo = serverInfo && trim(serverInfo, FIELDS_SINCE.implementation, version)
      const shapedCapabilities = capabilities && trim(capabilities, FIELDS_SINCE.serverCapabilities, version)
      return shapedInfo === serverInfo && shapedCapabilities === capabilities ? result : { ...result, serverInfo: shapedInfo, capabilities: shapedCapabilities } as JsonObject
    }
    case 'tools/list': return trimList(result, 'tools', FIELDS_SINCE.tool, version)
    case 'resources/list': return trimList(result, 'resources', FIELDS_SINCE.resource, version)
    case 'resources/templates/list': return trimList(result, 'resourceTemplates', FIELDS_SINCE.resourceTemplate, version)
    case 'prompts/list': {
      const shaped = trimList(result, 'prompts', FIELDS_SINCE.prompt, version)
      const prompts = shaped.prompts
      if (!Array.isArray(prompts)) return shaped
      let isChanged = shaped !== result
      const next = prompts.map(prompt => {
        const args = (prompt as JsonObject).arguments
        if (!Array.isArray(args)) return prompt
        const trimmed = args.map(arg => trim(arg as JsonObject, FIELDS_SINCE.promptArgument, version))
        if (trimmed.every((arg, i) => arg === args[i])) return prompt
        isChanged = true
        return { ...(prompt as JsonObject), arguments: trimmed }
      })
      return isChanged ? { ...shaped, prompts: next } as JsonObject : result
    }
    case 'tools/call': return trim(result, FIELDS_SINCE.callToolResult, version)
    default: return result
  }
}

/** `value` without the fields newer than `version`; `value` itself when it has none of them. */
function trim(value: JsonObject, since: Since, version: string): JsonObject {
  if (typeof value !== 'object' || value === null) return value
  let out: JsonObject | undefined
  for (const key in since) {
    if (since[key]! > version && Object.hasOwn(value, key)) {
      out ??= { ...value }
      delete out[key]
    }
  }
  return out ?? value
}

function trimList(result: JsonObject, key: string, since: Since, version: string): JsonObject {
  const items = result[key]
  if (!Array.isArray(items)) return result
  const trimmed = items.map(item => trim(item as JsonObject, since, version))
  return trimmed.every((item, i) => item === items[i]) ? result : { ...result, [key]: trimmed } as JsonObject
}
