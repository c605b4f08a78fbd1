/**
 * The interpreted validator's failures in ajv's words: @cfworker/json-schema reports every keyword
 * that failed, outermost first; ./json-schema-interpreted.ts runs it and hands the report here,
 * which names what ajv names (the innermost failure, the alternatives of an `anyOf`, the pair of
 * duplicate items) so both validators say the same. A leaf: it reads the prepared schema and never
 * runs the interpreter.
 */
import type { OutputUnit, Schema } from '@cfworker/json-schema'
import { isJsonObject } from './jsonrpc/guards.ts'
import type { ValidationIssue, ValidationResult } from './schema-rules.ts'
import { constMessage, enumMessage, extraPropertyMessage, invalidResult } from './schema-messages.ts'
import { duplicateItems } from './json-equal.ts'

/** A schema made ready for the interpreter. */
export interface Prepared {
  /** The rewritten deep copy the interpreter runs. */
  readonly root: Schema
  /** Every subschema by absolute URI (the interpreter's index). */
  readonly lookup: Record<string, Schema | boolean>
  /** Subschemas whose `pattern` stands for a format, with the format's name (for the message). */
  readonly formats: WeakMap<object, string>
}

/** The properties the interpreter's indexing defines (not enumerable) on each subschema. */
export interface Indexed { __absolute_uri__?: string; __absolute_ref__?: string; __absolute_recursive_ref__?: string }

/**
 * Keywords whose failure the interpreter reports followed by the failures beneath it (a property's,
 * an item's, a referenced schema's): the report names the innermost one, as ajv does. `anyOf`,
 * `oneOf`, `not` and `contains` stand for themselves: their subschemas' failures are alternatives.
 */
const NESTING: ReadonlySet<string> = new Set([
  '$ref', '$recursiveRef', 'properties', 'patternProperties', 'additionalProperties', 'unevaluatedProperties', 'dependentSchemas',
  'prefixItems', 'items', 'additionalItems', 'unevaluatedItems', 'allOf', 'if',
])

/**
 * The interpreter's failure report, worded as ajv words its own. ajv stops at the first failure and
 * names the innermost keyword that failed; for `anyOf` (and a `oneOf` nothing matched) it names each
 * alternative's failure before the keyword's own, and for `propertyNames` the name's failure.
 */
export function explain(prepared: Prepared, value: unknown, errors: readonly OutputUnit[]): ValidationResult {
  // The interpreter lists the items that failed `contains` before a minContains failure; ajv names
  // only the count, as it does for plain `contains`.
  const relevant = errors.filter(error => !error.keywordLocation.includes('/contains/'))
  return invalidResult(issuesOf(prepared, value, relevant.length > 0 ? relevant : errors))
}

/** The issues of the first failure in `errors` (a failure is followed by the failures nested in it). */
function issuesOf(prepared: Prepared, value: unknown, errors: readonly OutputUnit[]): ValidationIssue[] {
  let index = 0
  while (NESTING.has(errors[index]!.keyword) && index + 1 < errors.length) index++
  const leaf = errors[index]!
  const parent = index > 0 ? errors[index - 1]! : undefined
  if (leaf.keyword === 'false') {
    // A `false` subschema: under additionalProperties / unevaluatedProperties it means "no such
    // property", under an items keyword "no more items"; ajv says so at the container.
    const name = lastToken(leaf.instanceLocation)
    if (parent?.keyword === 'additionalProperties' || parent?.keyword === 'unevaluatedProperties') {
      return [{ path: pointer(parent.instanceLocation), message: extraPropertyMessage(parent.keyword, name) }]
    }
    if (parent !== undefined && /^(?:prefixItems|items|additionalItems|unevaluatedItems)$/.test(parent.keyword)) {
      return [{ path: pointer(parent.instanceLocation), message: `must NOT have more than ${name} items` }]
    }
    return [{ path: pointer(leaf.instanceLocation), message: 'boolean schema is false' }]
  }
  const path = pointer(leaf.instanceLocation)
  const node = schemaAt(prepared, leaf.keywordLocation)
  if (node === undefined) return [{ path, message: `must pass "${leaf.keyword}" keyword validation` }]
  const issue = { path, message: describe(leaf.keyword, node, valueAt(value, path), prepared.formats) }
  if (leaf.keyword !== 'anyOf' && leaf.keyword !== 'oneOf' && leaf.keyword !== 'propertyNames') return [issue]
  // The failures nested in this one follow it, their schema paths under its own.
  const prefix = `${leaf.keywordLocation}/`
  let end = index + 1
  while (end < errors.length && errors[end]!.keywordLocation.startsWith(prefix)) end++
  const beneath = errors.slice(index + 1, end)
  if (leaf.keyword === 'propertyNames') {
    // ajv reports the name's failure at the object, not at a member.
    return beneath.length === 0 ? [issue] : [...issuesOf(prepared, value, beneath).map(each => ({ ...each, path })), issue]
  }
  const branches = new Map<string, OutputUnit[]>()
  for (const error of beneath) {
    const branch = error.keywordLocation.slice(prefix.length).split('/', 1)[0]!
    branches.set(branch, [...branches.get(branch) ?? [], error])
  }
  // A oneOf that more than one alternative matched fails on its own; ajv then names nothing beneath.
  if (leaf.keyword === 'oneOf' && branches.size !== (node.oneOf as unknown[]).length) return [issue]
  return [...[...branches.values()].flatMap(branch => issuesOf(prepared, value, branch)), issue]
}

/** ajv's wording of a failed keyword of `node` for the value `data`. */
function describe(keyword: string, node: Record<string, unknown>, data: unknown, formats: WeakMap<object, string>): string {
  const limit = node[keyword]
  switch (keyword) {
    case 'type': return `must be ${Array.isArray(limit) ? limit.join(',') : String(limit)}`
    case 'required': {
      const missing = (limit as string[]).find(name => !isJsonObject(data) || !Object.hasOwn(data, name))
      return `must have required property '${missing}'`
    }
    case 'dependentRequired':
    case 'dependencies': {
      for (const [name, needs] of Object.entries(limit as Record<string, unknown>)) {
        if (!isJsonObject(data) || !Object.hasOwn(data, name) || !Array.isArray(needs)) continue
        const missing = needs.find(need => !Object.hasOwn(data, need))
        if (missing !== undefined) return `must have property ${missing} when property ${name} is present`
      }
      return `must match the dependencies of the properties present`
    }
    case 'enum': return enumMessage(limit as unknown[])
    case 'const': return constMessage(limit)
    case 'format': return `must match format "${String(limit)}"`
    case 'pattern': {
      const format = formats.get(node)
      return format !== undefined ? `must match format "${format}"` : `must match pattern "${String(limit)}"`
    }
    case 'minimum': return `must be >= ${limit}`
    case 'maximum': return `must be <= ${limit}`
    case 'exclusiveMinimum': return `must be > ${limit}`
    case 'exclusiveMaximum': return `must be < ${limit}`
    case 'multipleOf': return `must be multiple of ${limit}`
    case 'minLength': return `must NOT have fewer than ${limit} characters`
    case 'maxLength': return `must NOT have more than ${limit} characters`
    case 'minItems': return `must NOT have fewer than ${limit} items`
    case 'maxItems': return `must NOT have more than ${limit} items`
    case 'minProperties': return `must NOT have fewer than ${limit} properties`
    case 'maxProperties': return `must NOT have more than ${limit} properties`
    case 'uniqueItems': return duplicateMessage(node.items, data as unknown[])
    case 'contains':
    case 'minContains':
    case 'maxContains': {
      const at = `must contain at least ${node.minContains ?? 1}`
      return node.maxContains === undefined ? `${at} valid item(s)` : `${at} and no more than ${node.maxContains} valid item(s)`
    }
    case 'anyOf': return 'must match a schema in anyOf'
    case 'oneOf': return 'must match exactly one schema in oneOf'
    case 'not': return 'must NOT be valid'
    case 'propertyNames': return 'property name must be valid'
    default: return `must pass "${keyword}" keyword validation`
  }
}

/** ajv's wording of duplicate items, naming the pair it finds first. */
function duplicateMessage(items: unknown, data: readonly unknown[]): string {
  const pair = duplicateItems(items, data)
  return pair === undefined ? 'must NOT have duplicate items' : `must NOT have duplicate items (items ## ${pair[0]} and ${pair[1]} are identical)`
}

/**
 * The subschema holding the keyword at `location` (the interpreter's `#/...` schema path, through
 * `$ref`s it followed), or undefined when the path cannot be followed.
 */
function schemaAt(prepared: Prepared, location: string): Record<string, unknown> | undefined {
  const tokens = location.split('/').slice(1, -1)
  let node: unknown = prepared.root
  for (const token of tokens) {
    if (!isJsonObject(node) && !Array.isArray(node)) return undefined
    const indexed = node as Indexed
    if (token === '$ref' && typeof indexed.__absolute_ref__ === 'string') node = prepared.lookup[indexed.__absolute_ref__]
    else if (token === '$recursiveRef' && typeof indexed.__absolute_recursive_ref__ === 'string') node = prepared.lookup[indexed.__absolute_recursive_ref__]
    else node = (node as Record<string, unknown>)[unescapeToken(decodeURIComponent(token))]
  }
  return isJsonObject(node) ? node : undefined
}

/** The interpreter's `#/a/0` instance location as a JSON Pointer (`/a/0`), as ajv reports paths. */
function pointer(location: string): string {
  return decodeURIComponent(location.slice(1))
}

/** The last member name or index of an instance location, unescaped. */
function lastToken(location: string): string {
  return unescapeToken(decodeURIComponent(location.slice(location.lastIndexOf('/') + 1)))
}

/** The part of `value` at the JSON Pointer `path`. */
function valueAt(value: unknown, path: string): unknown {
  if (path === '') return value
  let node = value
  for (const token of path.slice(1).split('/')) {
    if (typeof node !== 'object' || node === null) return undefined
    node = (node as Record<string, unknown>)[unescapeToken(token)]
  }
  return node
}

function unescapeToken(token: string): string {
  return token.replaceAll('~1', '/').replaceAll('~0', '~')
}
