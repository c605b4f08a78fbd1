/**
 * The YAML frontmatter of a Markdown file (`---` lines around a YAML block at the very start), read
 * into a JSON object. Not a whole YAML parser: the subset skill manifests use, which is block
 * mappings nested by indentation, block sequences (`- item`), flow sequences (`[a, b]`), plain,
 * single- and double-quoted scalars, literal (`|`) and folded (`>`) block scalars, and comments.
 * Plain scalars read as YAML 1.2 core does: `true`/`false`, `null`/`~`, numbers, else strings.
 * Anything else (anchors, tags, flow mappings, multi-document) makes the frontmatter unreadable:
 * undefined, never a guess.
 */

/** What a Markdown file's frontmatter holds, and the body after it. */
export interface Frontmatter {
  data: Record<string, unknown>
  body: string
}

const OPEN = /^\uFEFF?---[ \t]*\r?\n/
const CLOSE = /(?:^|\r?\n)---[ \t]*(?:\r?\n|$)/

/** Reads the frontmatter of `text`; undefined without one, or when it is not YAML this reader takes. */
export function readFrontmatter(text: string): Frontmatter | undefined {
  const open = OPEN.exec(text)
  if (open === null) return undefined
  const rest = text.slice(open[0].length)
  const close = CLOSE.exec(rest)
  if (close === null) return undefined
  const data = parseYamlBlock(rest.slice(0, close.index))
  return data === undefined ? undefined : { data, body: rest.slice(close.index + close[0].length) }
}

interface Line { indent: number; text: string }

/** A YAML block (the subset above) as an object; undefined when it is not one. */
export function parseYamlBlock(block: string): Record<string, unknown> | undefined {
  const lines: Line[] = []
  for (const raw of block.split(/\r?\n/)) {
    if (raw.includes('\t') && /^\s*\t/.test(raw)) return undefined
    const text = raw.trimEnd()
    if (text.trim() === '' || text.trimStart().startsWith('#')) { lines.push({ indent: -1, text: '' }); continue }
    lines.push({ indent: text.length - text.trimStart().length, text: text.trimStart() })
  }
  try {
    const reader = { lines, at: 0 }
    skipBlank(reader)
    if (reader.at >= lines.length) return {}
    const value = readNode(reader, lines[reader.at]!.indent)
    skipBlank(reader)
    if (reader.at < lines.length || !isMap(value)) return undefined
    return value
  } catch {
    return undefined
  }
}

interface Reader { lines: Line[]; at: number }

function skipBlank(reader: Reader): void {
  while (reader.at < reader.lines.length && reader.lines[reader.at]!.indent < 0) reader.at++
}

const isMap = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value)

/** A block node at `indent`: a sequence when its first line starts with `- `, else a mapping. */
function readNode(reader: Reader, indent: number): unknown {
  const first = reader.lines[reader.at]!
  return first.text === '-' || first.text.startsWith('- ') ? readSequence(reader, indent) : readMapping(reader, indent)
}

function readMapping(reader: Reader, indent: number): Record<string, unknown> {
  const map: Record<string, unknown> = Object.create(null)
  for (skipBlank(reader); reader.at < reader.lines.length; skipBlank(reader)) {
    const line = reader.lines[reader.at]!
    if (line.indent < indent) break
    if (line.indent > indent) throw new SyntaxError('unexpected indentation')
    const match = /^("(?:[^"\\]|\\.)*"|'(?:[^']|'')*'|[^\s#'"][^:#]*?)\s*:(?:\s+(.*))?$/.exec(line.text)
    if (match === null) throw new SyntaxError('not a mapping entry')
    const key = unquote(match[1]!)
    if (key === '__proto__' || key in map) throw new SyntaxError('duplicate or reserved key')
    reader.at++
    map[key] = readValue(reader, indent, match[2])
  }
  return { ...map }
}

function readSequence(reader: Reader, indent: number): unknown[] {
  const list: unknown[] = []
  for (skipBlank(reader); reader.at < reader.lines.length; skipBlank(reader)) {
    const line = reader.lines[reader.at]!
    if (line.indent < indent) break
    if (line.indent > indent || !(line.text === '-' || line.text.startsWith('- '))) throw new SyntaxError('not a sequence entry')
    const rest = line.text.slice(1).trimStart()
    if (rest !== '' && /^[^\s#'"[][^:#]*?:(\s|$)/.test(rest)) {
      // `- key: value`: a mapping whose first entry shares the dash's line.
      reader.lines[reader.at] = { indent: indent + 2, text: rest }
      list.push(readMapping(reader, indent + 2))
    } else {
      reader.at++
      list.push(readValue(reader, indent, rest === '' ? undefined : rest))
    }
  }
  return list
}

/** The value after `key:` (or `-`): inline, a block scalar, or a nested block on the next lines. */
function readValue(reader: Reader, indent: number, inline: string | undefined): unknown {
  const text = inline === undefined ? '' : stripComment(inline)
  if (text === '|' || text === '>' || /^[|>][+-]?$/.test(text)) return readBlockScalar(reader, indent, text)
  if (text !== '') return scalar(text)
  skipBlank(reader)
  const next = reader.lines[reader.at]
  if (next === undefined || next.indent <= indent) {
    // A sequence may sit at its key's indentation.
    if (next !== undefined && next.indent === indent && (next.text === '-' || next.text.startsWith('- '))) return readSequence(reader, indent)
    return null
  }
  return readNode(reader, next.indent)
}

function readBlockScalar(reader: Reader, indent: number, header: string): string {
  const parts: string[] = []
  let own = -1
  while (reader.at < reader.lines.length) {
    const line = reader.lines[reader.at]!
    if (line.indent >= 0 && line.indent <= indent) break
    if (line.indent >= 0 && own < 0) own = line.indent
    parts.push(line.indent < 0 ? '' : ' '.repeat(line.indent - own) + line.text)
    reader.at++
  }
  while (parts.length > 0 && parts.at(-1) === '') parts.pop()
  const joined = header.startsWith('|') ? parts.join('\n') : parts.join('\n').replace(/([^\n])\n(?=[^\n ])/g, '$1 ')
  return header.endsWith('-') ? joined : `${joined}\n`
}

function stripComment(text: string): string {
  if (text.startsWith('"') || text.startsWith("'")) return text
  const at = text.search(/\s#/)
  return (at < 0 ? text : text.slice(0, at)).trim()
}

function scalar(text: string): unknown {
  if (text.startsWith('"') || text.startsWith("'")) {
    const end = text.startsWith('"') ? /^"(?:[^"\\]|\\.)*"/.exec(text) : /^'(?:[^']|'')*'/.exec(text)
    if (end === null || stripComment(text.slice(end[0].length)) !== '') throw new SyntaxError('bad quoted scalar')
    return unquote(end[0])
  }
  if (text.startsWith('[')) return flowSequence(text)
  if (/^[{&*!%@`|>]/.test(text)) throw new SyntaxError('unsupported YAML')
  if (text === 'true' || text === 'True' || text === 'TRUE') return true
  if (text === 'false' || text === 'False' || text === 'FALSE') return false
  if (text === 'null' || text === 'Null' || text === 'NULL' || text === '~') return null
  if (/^[-+]?(?:0|[1-9]\d*)$/.test(text)) return Number(text)
  if (/^[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?$/.test(text)) return Number(text)
  return text
}

function flowSequence(text: string): unknown[] {
  if (!text.endsWith(']')) throw new SyntaxError('unclosed flow sequence')
  const inner = text.slice(1, -1).trim()
  if (inner === '') return []
  const items: unknown[] = []
  for (const part of inner.match(/"(?:[^"\\]|\\.)*"|'(?:[^']|'')*'|[^,]+/g) ?? []) {
    const item = part.trim()
    if (item !== '') items.push(scalar(item))
  }
  return items
}

function unquote(text: string): string {
  if (text.startsWith("'")) return text.slice(1, -1).replace(/''/g, "'")
  if (text.startsWith('"')) return JSON.parse(text.replace(/\\'/g, "'")) as string
  return text.trim()
}
