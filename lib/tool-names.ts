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
