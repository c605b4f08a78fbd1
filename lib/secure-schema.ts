/*
 * Whether a JSON Schema from an untrusted source (a server's outputSchema, as a client sees it) is
 * safe to run: plain code, no validator and no code generation, so both validators share it and it
 * works where `new Function` is refused. It imports nothing but the JSON guards.
 */
import { isJsonObject } from './jsonrpc/guards.ts'

/**
 * True when a schema from an untrusted source is safe to validate values with: it refuses what can
 * make validation slow on purpose. The rules are those of ajv's "secure" meta-schema:
 *
 * - `pattern` or `format` only beside `maxLength` (a long string is never matched);
 * - `patternProperties` only beside `propertyNames` with a `maxLength` (nor a long property name);
 * - `uniqueItems: true` beside `maxItems`, unless `items` says they are neither objects nor arrays
 *   (comparing many large values is quadratic);
 * - `allOf`, `anyOf` and `oneOf` hold non-empty arrays.
 *
 * They apply to every subschema. Where ajv's meta-schema (written for draft-07) does not look,
 * this does too: under `$defs`, `prefixItems`, `dependentSchemas`, `unevaluatedItems`,
 * `unevaluatedProperties`, `contentSchema` and the entries of a tuple `items` array, where a
 * schema could otherwise hide a slow `pattern` and reach it through `$ref`. A schema nested too
 * deeply to walk, or holding a cycle, is not secure.
 *
 * @example
 * isSecureSchema({ type: 'string', pattern: '^a+$' })                 // false
 * isSecureSchema({ type: 'string', pattern: '^a+$', maxLength: 64 })  // true
 */
export function isSecureSchema(schema: unknown): boolean {
  try {
    return isSecure(schema, new Set())
  } catch {
    // A stack overflow on a deeply nested schema: too costly to trust.
    return false
  }
}

/** Keywords whose value is one subschema. */
const SUBSCHEMA = ['additionalItems', 'additionalProperties', 'if', 'then', 'else', 'not', 'contains', 'propertyNames', 'unevaluatedItems', 'unevaluatedProperties', 'contentSchema']
/** Keywords whose value maps names to subschemas. */
const SUBSCHEMA_MAP = ['properties', 'patternProperties', 'definitions', '$defs', 'dependentSchemas']
/** Keywords whose value must be a non-empty array of subschemas. */
const SUBSCHEMA_LIST = ['allOf', 'anyOf', 'oneOf']

/**
 * `seen` holds the objects on the path from the root, so a cycle (possible in a schema built in
 * code, never in parsed JSON) ends the walk as insecure instead of looping.
 */
function isSecure(node: unknown, seen: Set<object>): boolean {
  // Rules bind objects only: a boolean schema, or a non-schema where a schema was expected, passes.
  if (!isJsonObject(node)) return true
  if (seen.has(node)) return false
  seen.add(node)
  if (has(node, 'pattern') && !has(node, 'maxLength')) return false
  if (has(node, 'format') && !has(node, 'maxLength')) return false
  if (has(node, 'patternProperties')) {
    const names = node.propertyNames
    if (names === undefined || (isJsonObject(names) && !has(names, 'maxLength'))) return false
  }
  if (node.uniqueItems === true && !has(node, 'maxItems') && mayHoldStructures(node.items)) return false
  for (const key of SUBSCHEMA) if (!isSecure(node[key], seen)) return false
  for (const key of SUBSCHEMA_MAP) {
    const map = node[key]
    if (isJsonObject(map)) for (const sub of Object.values(map)) if (!isSecure(sub, seen)) return false
  }
  for (const key of SUBSCHEMA_LIST) {
    const list = node[key]
    if (list === undefined) continue
    if (!Array.isArray(list) || list.length === 0) return false
    for (const sub of list) if (!isSecure(sub, seen)) return false
  }
  const items = node.items
  if (Array.isArray(items)) { for (const sub of items) if (!isSecure(sub, seen)) return false } else if (!isSecure(items, seen)) return false
  const prefix = node.prefixItems
  if (Array.isArray(prefix)) for (const sub of prefix) if (!isSecure(sub, seen)) return false
  const dependencies = node.dependencies
  // A dependency is a list of property names (nothing to run) or a subschema.
  if (isJsonObject(dependencies)) for (const sub of Object.values(dependencies)) if (!Array.isArray(sub) && !isSecure(sub, seen)) return false
  seen.delete(node)
  return true
}

/**
 * Whether the items of an array under `items` may be objects or arrays (then comparing them for
 * `uniqueItems` is costly): yes unless `items` is a schema object whose `type` rules both out.
 */
function mayHoldStructures(items: unknown): boolean {
  if (!isJsonObject(items) || items.type === undefined) return true
  const type = items.type
  if (type === 'object' || type === 'array') return true
  return Array.isArray(type) && type.some(each => each === 'object' || each === 'array')
}

/** An own keyword with a value (`undefined` counts as absent, as it does in JSON). */
function has(node: Record<string, unknown>, key: string): boolean {
  return Object.hasOwn(node, key) && node[key] !== undefined
}
