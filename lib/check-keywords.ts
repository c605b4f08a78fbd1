/*
 * The check of a schema's own keywords that ajv makes against the dialect's meta-schema, written as
 * code for the interpreter (./json-schema-interpreted.ts): an interpreter runs whatever it is given,
 * so without this `{ type: 'no-such-type' }` would compile and quietly accept everything. A leaf.
 */
import type { Dialect } from './schema-rules.ts'
import { isJsonObject } from './jsonrpc/guards.ts'

/** How a keyword holds subschemas, if it does. */
export type SubschemaKind = 'schema' | 'list' | 'map' | 'items' | 'dependencies'

/**
 * How `keyword` holds subschemas in `dialect` (undefined when it holds none, or is not a keyword of
 * the dialect): one schema, a list of them, a map of them, `items` (one, or in draft-07 and
 * 2019-09 a tuple list), or `dependencies` (per property, a schema or a list of names).
 */
export function subschemaKind(keyword: string, dialect: Dialect): SubschemaKind | undefined {
  const kind = SUBSCHEMAS[keyword]
  if (kind === undefined) return undefined
  return DIALECT_KEYWORDS[dialect].has(keyword) || COMMON_KEYWORDS.has(keyword) ? kind : undefined
}

/**
 * Checks that `schema` is a valid schema of `dialect`, as far as validation depends on it: every
 * keyword rxmcp's validators read holds a value of the right type (a type name, a non-negative
 * integer, a list of subschemas...), every `pattern` and `patternProperties` name is a regular
 * expression (with the `u` flag, as both validators compile them), `enum` is not empty (ajv refuses
 * one: no value could match), and `$id`, `$anchor` and their kin are well formed. Keywords it does
 * not know are annotations and pass, as they do in ajv with `strict` off.
 *
 * @throws TypeError `Invalid JSON Schema: <where> <what>`, naming the first problem found by its
 *   JSON Pointer in the schema.
 */
export function checkKeywords(schema: object, dialect: Dialect): void {
  checkSchema(schema, '', dialect)
}

/** The JSON Schema types. */
const TYPES: ReadonlySet<unknown> = new Set(['array', 'boolean', 'integer', 'null', 'number', 'object', 'string'])

const SUBSCHEMAS: Readonly<Record<string, SubschemaKind>> = {
  additionalProperties: 'schema', propertyNames: 'schema', not: 'schema', if: 'schema', then: 'schema', else: 'schema',
  contains: 'schema', additionalItems: 'schema', unevaluatedItems: 'schema', unevaluatedProperties: 'schema', contentSchema: 'schema',
  allOf: 'list', anyOf: 'list', oneOf: 'list', prefixItems: 'list',
  properties: 'map', patternProperties: 'map', definitions: 'map', $defs: 'map', dependentSchemas: 'map',
  items: 'items', dependencies: 'dependencies',
}

/** Keywords every supported dialect has (draft-07 and later; draft-06 runs as draft-07). */
const COMMON_KEYWORDS: ReadonlySet<string> = new Set([
  'additionalProperties', 'propertyNames', 'not', 'if', 'then', 'else', 'contains', 'allOf', 'anyOf', 'oneOf', 'properties',
  'patternProperties', 'definitions', 'items', 'dependencies', 'type', 'enum', 'const', 'multipleOf', 'maximum', 'minimum',
  'exclusiveMaximum', 'exclusiveMinimum', 'maxLength', 'minLength', 'pattern', 'maxItems', 'minItems', 'uniqueItems',
  'maxProperties', 'minProperties', 'required', '$id', '$schema', '$ref', '$comment', 'format', 'contentEncoding',
  'contentMediaType', 'title', 'description', 'default', 'readOnly', 'writeOnly', 'examples',
])

/** Keywords beyond the common ones, by dialect: what ajv's instance of that dialect knows. */
const DIALECT_KEYWORDS: Readonly<Record<Dialect, ReadonlySet<string>>> = {
  'draft-07': new Set(['additionalItems']),
  '2019-09': new Set([
    'additionalItems', 'unevaluatedItems', 'unevaluatedProperties', 'contentSchema', '$defs', 'dependentSchemas', 'dependentRequired',
    'maxContains', 'minContains', '$anchor', '$recursiveRef', '$recursiveAnchor', '$dynamicRef', '$dynamicAnchor', '$vocabulary', 'deprecated',
  ]),
  '2020-12': new Set([
    'unevaluatedItems', 'unevaluatedProperties', 'contentSchema', '$defs', 'dependentSchemas', 'dependentRequired', 'prefixItems',
    'maxContains', 'minContains', '$anchor', '$dynamicRef', '$dynamicAnchor', '$recursiveRef', '$recursiveAnchor', '$vocabulary', 'deprecated',
  ]),
}

/** The plain-name fragments `$anchor` (and `$dynamicAnchor`) may hold, by dialect. */
const ANCHOR: Readonly<Record<Dialect, RegExp>> = {
  'draft-07': /^[A-Za-z_][-A-Za-z0-9._]*$/,
  '2019-09': /^[A-Za-z][-A-Za-z0-9.:_]*$/,
  '2020-12': /^[A-Za-z_][-A-Za-z0-9._]*$/,
}

type Check = (value: unknown, dialect: Dialect) => string | undefined

const isNonNegativeInteger: Check = value => (Number.isInteger(value) && (value as number) >= 0 ? undefined : 'must be a non-negative integer')
const isNumber: Check = value => (typeof value === 'number' && Number.isFinite(value) ? undefined : 'must be a number')
const isString: Check = value => (typeof value === 'string' ? undefined : 'must be a string')
const isBoolean: Check = value => (typeof value === 'boolean' ? undefined : 'must be a boolean')
const isNameList: Check = value =>
  Array.isArray(value) && value.every(name => typeof name === 'string') && new Set(value).size === value.length ? undefined : 'must be a list of distinct strings'
const isAnchor: Check = (value, dialect) => (typeof value === 'string' && ANCHOR[dialect].test(value) ? undefined : 'must be a plain name (letters, digits, "-", "_", ".")')

/** The checks of keywords that hold no subschema. */
const VALUE_CHECKS: Readonly<Record<string, Check>> = {
  type: value => {
    const names = Array.isArray(value) ? value : [value]
    const isValid = names.length > 0 && names.every(name => TYPES.has(name)) && new Set(names).size === names.length
    return isValid ? undefined : 'must be a JSON type name (array, boolean, integer, null, number, object, string) or a list of distinct ones'
  },
  enum: value => (Array.isArray(value) && value.length > 0 ? undefined : 'must be a non-empty array'),
  multipleOf: value => (typeof value === 'number' && Number.isFinite(value) && value > 0 ? undefined : 'must be a number greater than 0'),
  maximum: isNumber, minimum: isNumber, exclusiveMaximum: isNumber, exclusiveMinimum: isNumber,
  maxLength: isNonNegativeInteger, minLength: isNonNegativeInteger, maxItems: isNonNegativeInteger, minItems: isNonNegativeInteger,
  maxProperties: isNonNegativeInteger, minProperties: isNonNegativeInteger, maxContains: isNonNegativeInteger, minContains: isNonNegativeInteger,
  pattern: value => (typeof value === 'string' ? regExpProblem(value) : 'must be a string'),
  uniqueItems: isBoolean, readOnly: isBoolean, writeOnly: isBoolean, deprecated: isBoolean,
  required: isNameList,
  dependentRequired: value => {
    if (!isJsonObject(value)) return 'must be an object'
    for (const [name, list] of Object.entries(value)) if (isNameList(list, '2020-12') !== undefined) return `${JSON.stringify(name)} must be a list of distinct strings`
    return undefined
  },
  // MCP 2025-11-25 and JSON Schema 2019-09: `$id` identifies a resource; a fragment there is an anchor's job.
  $id: (value, dialect) => typeof value !== 'string' ? 'must be a string' : dialect !== 'draft-07' && /#./.test(value) ? 'must not have a fragment (use $anchor)' : undefined,
  $schema: isString, $ref: isString, $comment: isString, $dynamicRef: isString, $recursiveRef: isString,
  $anchor: isAnchor, $dynamicAnchor: isAnchor,
  $recursiveAnchor: (value, dialect) => (dialect === '2019-09' ? isBoolean(value, dialect) : isAnchor(value, dialect)),
  $vocabulary: value => (isJsonObject(value) && Object.values(value).every(flag => typeof flag === 'boolean') ? undefined : 'must map URIs to booleans'),
  format: isString, contentEncoding: isString, contentMediaType: isString, title: isString, description: isString,
  examples: value => (Array.isArray(value) ? undefined : 'must be an array'),
}

function checkSchema(node: unknown, at: string, dialect: Dialect): void {
  if (typeof node === 'boolean') return
  if (!isJsonObject(node)) fail(at, 'must be a schema (an object or a boolean)')
  for (const keyword of Object.keys(node)) {
    const value = node[keyword]
    const where = `${at}/${escape(keyword)}`
    const kind = subschemaKind(keyword, dialect)
    if (kind !== undefined) {
      checkSubschemas(kind, keyword, value, where, dialect)
      continue
    }
    if (!COMMON_KEYWORDS.has(keyword) && !DIALECT_KEYWORDS[dialect].has(keyword)) continue
    const problem = VALUE_CHECKS[keyword]?.(value, dialect)
    if (problem !== undefined) fail(where, problem)
  }
}

function checkSubschemas(kind: SubschemaKind, keyword: string, value: unknown, where: string, dialect: Dialect): void {
  switch (kind) {
    case 'schema':
      return checkSchema(value, where, dialect)
    case 'items':
      // 2020-12 moved tuples to prefixItems: an `items` list there is a mistake, not a tuple.
      if (Array.isArray(value) && dialect !== '2020-12') return checkList(value, where, dialect)
      return checkSchema(value, where, dialect)
    case 'list':
      return checkList(value, where, dialect)
    case 'map':
      if (!isJsonObject(value)) fail(where, 'must be an object of schemas')
      for (const [name, sub] of Object.entries(value)) {
        if (keyword === 'patternProperties') {
          const problem = regExpProblem(name)
          if (problem !== undefined) fail(`${where}/${escape(name)}`, `(the property name pattern) ${problem}`)
        }
        checkSchema(sub, `${where}/${escape(name)}`, dialect)
      }
      return
    case 'dependencies':
      if (!isJsonObject(value)) fail(where, 'must be an object')
      for (const [name, sub] of Object.entries(value)) {
        if (Array.isArray(sub)) {
          if (isNameList(sub, dialect) !== undefined) fail(`${where}/${escape(name)}`, 'must be a schema or a list of distinct strings')
        } else {
          checkSchema(sub, `${where}/${escape(name)}`, dialect)
        }
      }
  }
}

function checkList(value: unknown, where: string, dialect: Dialect): void {
  if (!Array.isArray(value) || value.length === 0) fail(where, 'must be a non-empty array of schemas')
  value.forEach((sub, index) => checkSchema(sub, `${where}/${index}`, dialect))
}

/** Why `source` is not a regular expression with the `u` flag, or undefined when it is one. */
function regExpProblem(source: string): string | undefined {
  try {
    new RegExp(source, 'u')
    return undefined
  } catch (error) {
    return `must be a regular expression (${error instanceof Error ? error.message : String(error)})`
  }
}

function fail(where: string, problem: string): never {
  throw new TypeError(`Invalid JSON Schema: ${where === '' ? 'the schema' : where} ${problem}`)
}

/** A JSON Pointer (RFC 6901) token. */
function escape(token: string): string {
  return token.replaceAll('~', '~0').replaceAll('/', '~1')
}
