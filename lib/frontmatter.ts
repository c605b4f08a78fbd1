/**
 * The YAML frontmatter of a Markdown file (`---` lines around a YAML block at the very start), read
 * into a JSON object with the `yaml` package. Only the skills code calls it, so `yaml` is imported
 * on the first read, never when rxmcp is loaded: a server or client that serves or loads no skill
 * never loads it.
 *
 * What it reads is YAML 1.2 with the core schema's plain scalars as this reader has always taken
 * them: `true`/`false`, `null`/`~`, decimal numbers, else strings (`0x1F`, `0o17`, `.inf` and
 * `.nan` stay strings, so every value is JSON). What it refuses, as undefined rather than a guess:
 * anchors and aliases (so nothing can expand, however small the text), tags, flow mappings,
 * collections as keys, duplicate keys (`a` and `"a"` included), a `__proto__` key, a root that is
 * not a mapping, more than one document, numbers JSON cannot carry (`1e999`), a block over
 * {@link FRONTMATTER_LIMITS}.maxLength characters, and nesting deeper than `maxDepth`.
 */
import type { CST, Document, Node, ParsedNode, Tags } from 'yaml'

/** What a Markdown file's frontmatter holds, and the body after it. */
export interface Frontmatter {
  data: Record<string, unknown>
  body: string
}

/**
 * Bounds on a frontmatter block, checked before yaml composes it: its length in characters (a
 * manifest needs a few hundred; yaml spends about a millisecond per 100 characters on the worst
 * shapes), and how deep collections nest (yaml composes recursively, and a deep stack can take the
 * process down rather than throw).
 */
export const FRONTMATTER_LIMITS = { maxLength: 16 * 1024, maxDepth: 64 } as const

const OPEN = /^\uFEFF?---[ \t]*\r?\n/
const CLOSE = /(?:^|\r?\n)---[ \t]*(?:\r?\n|$)/

/**
 * Resolves to the frontmatter of `text`; undefined without one, or when it is not YAML this reader
 * takes. Rejects only when the `yaml` package cannot be loaded.
 * @example
 * const read = await readFrontmatter('---\nname: pdf-tools\n---\n# PDF tools\n')
 * // { data: { name: 'pdf-tools' }, body: '# PDF tools\n' }
 */
export async function readFrontmatter(text: string): Promise<Frontmatter | undefined> {
  const open = OPEN.exec(text)
  if (open === null) return undefined
  const rest = text.slice(open[0].length)
  const close = CLOSE.exec(rest)
  if (close === null) return undefined
  const data = await parseYamlBlock(rest.slice(0, close.index))
  return data === undefined ? undefined : { data, body: rest.slice(close.index + close[0].length) }
}

type Yaml = typeof import('yaml')

/** The one load of yaml in progress or done, shared by every read. */
let loading: Promise<Yaml> | undefined

function loadYaml(): Promise<Yaml> {
  loading ??= import('yaml').catch((error: unknown) => {
    loading = undefined
    throw error
  })
  return loading
}

/** A YAML block (see the file's comment) as an object; resolves to undefined when it is not one. */
export async function parseYamlBlock(block: string): Promise<Record<string, unknown> | undefined> {
  if (block.length > FRONTMATTER_LIMITS.maxLength) return undefined
  const yaml = await loadYaml()
  try {
    // The parser keeps its own stack; the composer recurses, so depth is measured in between.
    const tokens = [...new yaml.Parser().parse(block)]
    if (depthOf(tokens) > FRONTMATTER_LIMITS.maxDepth) return undefined
    const documents = [...new yaml.Composer({
      version: '1.2',
      schema: 'core',
      customTags: plainScalarsAsBefore,
      merge: false,
      // Duplicates are refused below, one lookup per key: yaml's own check is quadratic in a map's size.
      uniqueKeys: false,
      logLevel: 'error',
    }).compose(tokens, true, block.length)]
    if (documents.length !== 1) return undefined
    const document: Document.Parsed = documents[0]!
    if (document.errors.length > 0 || document.warnings.length > 0) return undefined
    if (document.contents === null) return {}
    const data = jsonOf(yaml, document.contents, 0)
    return isObject(data) ? data : undefined
  } catch {
    return undefined
  }
}

/** The core schema without hexadecimal and octal integers, infinities and NaN: those read as strings. */
function plainScalarsAsBefore(tags: Tags): Tags {
  return tags.filter(tag => typeof tag !== 'object' || !(tag.format === 'HEX' || tag.format === 'OCT' || tag.test?.test('.nan') === true))
}

/** How deep collections nest in the parsed tokens, walked with a stack of our own. */
function depthOf(tokens: readonly CST.Token[]): number {
  let deepest = 0
  const pending: Array<[CST.Token, number]> = tokens.map(token => [token, 0])
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const [token, depth] = next
    deepest = Math.max(deepest, depth)
    if (token.type === 'document' && token.value !== undefined) pending.push([token.value, depth])
    if (token.type === 'block-map' || token.type === 'block-seq' || token.type === 'flow-collection') {
      for (const item of token.items) {
        if (item.key != null) pending.push([item.key, depth + 1])
        if (item.value !== undefined) pending.push([item.value, depth + 1])
      }
    }
  }
  return deepest
}

/** Thrown inside {@link jsonOf} for what the reader refuses; parseYamlBlock turns it into undefined. */
class Refused extends Error {}

/** A composed node as JSON, refusing what the file's comment lists. Depth is bounded by depthOf. */
function jsonOf(yaml: Yaml, node: ParsedNode | Node | null, depth: number): unknown {
  if (node === null) return null
  if (depth > FRONTMATTER_LIMITS.maxDepth) throw new Refused('too deep')
  if (yaml.isAlias(node) || node.anchor !== undefined || node.tag !== undefined) throw new Refused('anchor, alias or tag')
  if (yaml.isScalar(node)) {
    const value = node.value
    if (typeof value === 'number' && !Number.isFinite(value)) throw new Refused('not a JSON number')
    if (value === null || typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') return value
    throw new Refused('not a JSON value')
  }
  if (yaml.isSeq(node)) return node.items.map(item => jsonOf(yaml, item as Node | null, depth + 1))
  if (yaml.isMap(node) && node.flow !== true) {
    const map: Record<string, unknown> = {}
    for (const pair of node.items) {
      const key = pair.key
      if (!yaml.isScalar(key) || key.anchor !== undefined || key.tag !== undefined) throw new Refused('not a scalar key')
      // A key as written (`1.0`, `null`), and a quoted one as its text; an empty plain key is none.
      const name = key.source
      if (typeof name !== 'string' || (name === '' && key.type === 'PLAIN')) throw new Refused('no key')
      if (name === '__proto__' || Object.hasOwn(map, name)) throw new Refused('duplicate or reserved key')
      map[name] = jsonOf(yaml, pair.value as Node | null, depth + 1)
    }
    return map
  }
  throw new Refused('flow mapping or unknown node')
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value)
