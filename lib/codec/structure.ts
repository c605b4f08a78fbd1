import type { StructureBound } from '../jsonrpc/errors.ts'

/**
 * Bounds on the shape of one incoming message, checked by the codecs before the message is parsed.
 * A message within the size limit can still cost far more than its size: 4 MiB of `[` nested 1.9
 * million levels took 1.6 s to parse and overflows every recursive walk after it (JSON.stringify,
 * schema validation), and 200,000 distinct keys cost seconds and hundreds of MiB building hidden
 * classes. Both are refused, as -32700 (`StructureLimitError`), at a cost linear in the message.
 */
export interface StructureLimits {
  /**
   * Most levels of nesting of objects and arrays: the top-level value is level 1, so a request's
   * `params` is level 2 and a tool call's `arguments` level 3.
   */
  maxDepth?: number
  /** Most members in one message: object entries and array elements, at every depth, counted together. */
  maxMembers?: number
}

/**
 * DEFAULTS of {@link StructureLimits}, for every codec (JSON lines, JSON frames, msgpack).
 *
 * - `maxDepth` 128: a JSON-RPC envelope uses 3 levels, MCP's own types fewer than 10 more (a tool's
 *   JSON Schema in tools/list, a sampling message's content), so tool arguments and structured
 *   results keep well over 100 levels of their own. Recursive code (JSON.stringify, ajv, a
 *   handler's own walk) runs thousands of levels deep before the stack runs out, so 128 is far
 *   from harm; .NET's System.Text.Json stops at 64 by default, Jackson at 1,000.
 * - `maxMembers` 100,000: a tools/list page of 1,000 tools with rich schemas holds about 50,000;
 *   the worst shape within the bound (distinct keys in small objects, the costliest for V8) parses
 *   in about 0.3 s and 50 MiB, against 1.4 s and 100+ MiB at 200,000.
 */
export const STRUCTURE_DEFAULTS = { maxDepth: 128, maxMembers: 100_000 } as const

/** `limits` with the defaults filled in (the defaults object itself when none is given). */
export function limitsOf(limits: StructureLimits | undefined): Required<StructureLimits> {
  if (limits?.maxDepth === undefined && limits?.maxMembers === undefined) return STRUCTURE_DEFAULTS
  return { maxDepth: limits.maxDepth ?? STRUCTURE_DEFAULTS.maxDepth, maxMembers: limits.maxMembers ?? STRUCTURE_DEFAULTS.maxMembers }
}

const QUOTE = 0x22
const BACKSLASH = 0x5c
const COMMA = 0x2c
const OPEN_BRACE = 0x7b
const CLOSE_BRACE = 0x7d
const OPEN_BRACKET = 0x5b
const CLOSE_BRACKET = 0x5d

/**
 * The bound a JSON text breaks, or undefined when it keeps both: one pass over the text, before
 * `JSON.parse`. Strings are skipped natively (`indexOf`, and a regular expression past escaped
 * quotes): most of a message's bytes are in strings, so the pass costs a fraction of the parse
 * (`spec/bench/structure-bench.ts`). Outside strings it counts the depth at each bracket and a
 * member at each comma and at the close of each non-empty container.
 *
 * Only what the text could break is checked: a text of `2 * maxDepth + 1` characters or fewer
 * cannot nest deeper than `maxDepth` and still be JSON (each level takes an opening and a closing
 * bracket), nor hold more than `maxDepth` members, so short messages (most of them) are not
 * scanned at all. Nor can a text with no more than `maxDepth` opening brackets (counted natively,
 * strings included) nest deeper, or one of `2 * maxMembers` characters hold more members (each
 * member takes a character and a separator or bracket), nor one whose commas and opening brackets
 * (strings included) number no more than `maxMembers` (each member is followed by a comma or closes
 * its container), so most longer messages (a request with modern `_meta`, a result of a few KiB, a
 * file of text in one string) are passed after a few native `indexOf` calls: the walk through the
 * strings, which costs as much as the parse when they hold many escaped quotes, is left to texts
 * with many commas or brackets. Invalid JSON is not this function's to find: it answers undefined or a bound,
 * and `JSON.parse` refuses the rest.
 * @example
 * exceededBound('[[[1]]]', 2, 100) // 'maxDepth'
 */
export function exceededBound(text: string, maxDepth: number, maxMembers: number): StructureBound | undefined {
  const length = text.length
  if (length <= 2 * maxDepth + 1 && length <= maxMembers) return undefined
  const openings = openingsAtMost(text, maxDepth)
  // Every member is followed by a comma or closes its container: a text with few commas (strings
  // included, counted natively) cannot hold too many, and needs no walk through its strings.
  if (openings >= 0 && (length <= 2 * maxMembers || openings + countAtMost(text, ',', maxMembers - openings) <= maxMembers)) return undefined
  let depth = 0
  let members = 0
  let i = 0
  while (i < length) {
    const unit = text.charCodeAt(i)
    if (unit === QUOTE) {
      i = stringEnd(text, i)
      if (i < 0) return undefined
    } else if (unit === COMMA) {
      if (++members > maxMembers) return 'maxMembers'
    } else if (unit === OPEN_BRACE || unit === OPEN_BRACKET) {
      if (++depth > maxDepth) return 'maxDepth'
    } else if (unit === CLOSE_BRACE || unit === CLOSE_BRACKET) {
      depth--
      // The last member of a container has no comma after it: count it at the close, unless the
      // container is empty (the character before the close, past spaces, is its opening).
      let before = i - 1
      let previous = text.charCodeAt(before)
      while (previous === 0x20 || previous === 0x0a || previous === 0x0d || previous === 0x09) previous = text.charCodeAt(--before)
      if (previous !== OPEN_BRACE && previous !== OPEN_BRACKET && ++members > maxMembers) return 'maxMembers'
    }
    i++
  }
  return undefined
}

/** How many opening brackets (`{` and `[`) `text` holds, or -1 when more than `limit` (it stops there). */
function openingsAtMost(text: string, limit: number): number {
  const braces = countAtMost(text, '{', limit)
  if (braces > limit) return -1
  const count = braces + countAtMost(text, '[', limit - braces)
  return count > limit ? -1 : count
}

/** How many times `unit` occurs in `text`, counted natively up to `limit + 1` (then it stops). */
function countAtMost(text: string, unit: string, limit: number): number {
  let count = 0
  for (let at = text.indexOf(unit); at >= 0 && count <= limit; at = text.indexOf(unit, at + 1)) count++
  return count
}

/**
 * A quote that closes a string: preceded by an even run of backslashes (none, or escaped ones),
 * itself not preceded by another backslash. Sticky-free and global, used with `lastIndex`.
 */
const CLOSING_QUOTE = /(?<!\\)(?:\\\\)*"/g

/**
 * Index of the quote that closes the string opening at `start`, or -1 when none does. The first
 * quote is found with `indexOf`, which is all a string without escaped quotes needs; once one
 * escaped quote shows (JSON inside a string: many of them), the rest is left to the regular
 * expression engine, which skips them natively instead of one call each. Both are linear.
 */
function stringEnd(text: string, start: number): number {
  const end = text.indexOf('"', start + 1)
  if (end <= 0 || text.charCodeAt(end - 1) !== BACKSLASH) return end
  let run = 1
  while (text.charCodeAt(end - 1 - run) === BACKSLASH) run++
  if (run % 2 === 0) return end
  CLOSING_QUOTE.lastIndex = end + 1
  return CLOSING_QUOTE.test(text) ? CLOSING_QUOTE.lastIndex - 1 : -1
}
