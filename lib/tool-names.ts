/**
 * The host's naming rule for aggregated tools and prompts: `<server>__<name>`, made to fit the tool
 * name limits of LLM APIs (`^[A-Za-z0-9_-]{1,64}$`, the strictest of Anthropic's and OpenAI's) and
 * collision-free over the whole set:
 *
 * 1. characters outside `[A-Za-z0-9_-]` in the tool's name become `_`;
 * 2. a name longer than 64, or one that two different (server, name) pairs would share after step
 *    1, keeps its first 55 characters and gets `_` and 8 hex digits of a hash of the server and
 *    the original name, so the same tool always gets the same name.
 *
 * Server names are already restricted to `[A-Za-z0-9_-]{1,32}` by the configuration.
 */

import { LocalError, LocalErrorCode } from './jsonrpc/errors.ts'

/** The most characters of an aggregated name. */
export const MAX_TOOL_NAME = 64
const SEPARATOR = '__'

/** Aggregated names for `entries` (server, name), in order: the same pair always maps to the same name. */
export function namespacedNames(entries: readonly { server: string; name: string }[]): string[] {
  const plain = entries.map(({ server, name }) => `${server}${SEPARATOR}${name.replace(/[^A-Za-z0-9_-]/g, '_')}`)
  const counts = new Map<string, number>()
  for (const name of plain) counts.set(name, (counts.get(name) ?? 0) + 1)
  return entries.map(({ server, name }, index) => {
    const candidate = plain[index]!
    const isExact = candidate === `${server}${SEPARATOR}${name}`
    // A name changed by sanitizing that collides with another gets a hash; an exact one keeps its name.
    if (candidate.length <= MAX_TOOL_NAME && (counts.get(candidate) === 1 || isExact)) return candidate
    return `${candidate.slice(0, MAX_TOOL_NAME - 9)}_${hash8(`${server}\u0000${name}`)}`
  })
}

/** 8 hex digits of FNV-1a over the UTF-16 code units: stable, not cryptographic (names, not secrets). */
function hash8(text: string): string {
  let hash = 0x811c9dc5
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i)
    hash = Math.imul(hash, 0x01000193) >>> 0
  }
  return hash.toString(16).padStart(8, '0')
}

/**
 * MCP 2025-11-25 (and 2026-07-28) tools, "Tool names" (SEP-986): a tool name SHOULD be 1 to 128
 * characters long.
 */
export const TOOL_NAME_MAX_LENGTH = 128

/** The characters a tool name SHOULD be made of (SEP-986): ASCII letters, digits, `_`, `-` and `.`. */
const TOOL_NAME_CHARACTERS = /^[A-Za-z0-9_.-]*$/
/** One character a tool name SHOULD NOT hold, found anywhere. */
const OTHER_CHARACTER = /[^A-Za-z0-9_.-]/gu
/** The most offending characters a warning names. */
const MAX_NAMED_CHARACTERS = 5

/**
 * How `name` goes against the tool-name rules of MCP 2025-11-25 (SEP-986), one sentence each;
 * empty when it follows them. Every rule there is a SHOULD (1 to 128 characters; only
 * `A-Z a-z 0-9 _ - .`, so no spaces, commas or other special characters; case-sensitive; unique
 * within a server), so a name that breaks one is still a name: rxmcp warns and serves it. The
 * registry refuses only what it cannot serve: an empty name and a second tool of the same name.
 * @example
 * toolNameIssues('get user,v2') // ['contains " ", "," (tool names use only A-Z a-z 0-9 _ - .)']
 */
export function toolNameIssues(name: string): string[] {
  const issues: string[] = []
  if (name.length === 0) issues.push('is empty')
  if (name.length > TOOL_NAME_MAX_LENGTH) issues.push(`is ${name.length} characters long (at most ${TOOL_NAME_MAX_LENGTH})`)
  if (!TOOL_NAME_CHARACTERS.test(name)) {
    const others = new Set<string>()
    for (const [character] of name.matchAll(OTHER_CHARACTER)) {
      others.add(character)
      if (others.size === MAX_NAMED_CHARACTERS) break
    }
    issues.push(`contains ${[...others].map(character => JSON.stringify(character)).join(', ')} (tool names use only A-Z a-z 0-9 _ - .)`)
  }
  return issues
}

/**
 * A tool name that goes against the SEP-986 rules (see {@link toolNameIssues}): a warning, not a
 * failure. The server reports it when such a tool is registered, the client when one is listed,
 * both through `reportUnhandledError` (the server's default writes the message with console.warn).
 */
export class ToolNameWarning extends LocalError {
  override name = 'ToolNameWarning'
  readonly code = LocalErrorCode.ToolName
  constructor(readonly tool: string, readonly issues: readonly string[]) {
    super(`Tool ${JSON.stringify(tool.length > 64 ? `${tool.slice(0, 64)}…` : tool)} does not follow the MCP tool name rules (SEP-986): it ${issues.join('; it ')}`)
  }
}
