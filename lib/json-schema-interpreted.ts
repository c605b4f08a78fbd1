/**
 * The interpreted JSON Schema validator: the same contract as ./json-schema.ts (ajv), run by
 * `@cfworker/json-schema`, which walks the schema for each value instead of generating code. It
 * works where `new Function` is refused: Cloudflare Workers, `node
 * --disallow-code-generation-from-strings`, pages whose Content-Security-Policy lacks
 * 'unsafe-eval'. A validation costs more (1-15 µs for a tool's arguments, against 40-400 ns
 * compiled: `npm run bench`, group validator); compiling costs 25 times less. This module never
 * imports ajv, and the runtime loads it only when it is chosen (see ./validator.ts), through a
 * dynamic import.
 *
 * What the interpreter does not do itself, this module does around it, so that both validators
 * give the same verdicts: the schema's keywords are checked as ajv checks them against the
 * dialect's meta-schema (./check-keywords.ts); the five checked formats follow
 * ./schema-formats.ts; keywords a dialect does not have are ignored, as ajv ignores them;
 * `$dynamicRef` is resolved when compiling (see {@link compileSchema}); failures are worded as
 * ajv words them.
 */
import { dereference, validate, type OutputUnit, type Schema } from '@cfworker/json-schema'
import { checkKeywords, subschemaKind } from './check-keywords.ts'
import { dialectOf, type Dialect, type JsonSchemaCompiler, type ValidationIssue, type ValidationResult, type Validator } from './schema-rules.ts'
import { DATE_PATTERN, DATE_TIME_SHAPE, EMAIL_PATTERN, URI_PATTERN, UUID_PATTERN } from './schema-formats.ts'
import { TOO_DEEP, VALID, constMessage, enumMessage, extraPropertyMessage, invalidResult, oneLine } from './schema-messages.ts'
import { isSecureSchema } from './secure-schema.ts'
import { duplicateItems } from './json-equal.ts'

export type { JsonSchemaCompiler, JsonSchemaValidatorOption, ValidationIssue, ValidationResult, Validator } from './schema-rules.ts'
export { isSecureSchema } from './secure-schema.ts'

/**
 * Compiles a JSON Schema once and returns its validator; the interpreted counterpart of
 * `compileSchema` in `rxmcp/json-schema`, with the same verdicts.
 *
 * The dialect follows `$schema` as there: 2020-12 when it is absent, otherwise 2020-12, 2019-09,
 * draft-07 or draft-06 (run as draft-07). The formats `email`, `uri`, `date`, `date-time` and
 * `uuid` are checked, others ignored. `$ref` resolves inside the schema only, never across
 * schemas and never over the network. `$dynamicRef` is resolved when compiling: a schema where
 * more than one schema resource declares the `$dynamicAnchor` it names (the extension pattern of
 * meta-schemas) is refused, since which one applies depends on the path taken through the value.
 * Own properties only: `required: ['toString']` is not met by Object.prototype.
 *
 * The validator works on a deep copy of the schema, made here: the caller's object is never
 * changed, and later edits to it are not seen. Validators are cached per schema object.
 *
 * Values that are not JSON (`undefined` members, functions) are validated as the JSON they
 * serialize to, which is what goes on the wire; a value that does not serialize is invalid.
 *
 * @throws TypeError when `schema` is not an object, names a dialect we do not support, is not a
 *   valid schema, or holds a `$ref` that does not resolve inside it (the message says why).
 * @example
 * const validate = compileSchema({ type: 'object', properties: { text: { type: 'string' } } })
 * validate({ text: 1 }) // { valid: false, message: '/text: must be string', errors: [...] }
 */
export function compileSchema(schema: object): Validator {
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) {
    throw new TypeError('A JSON Schema must be an object')
  }
  const cached = cache.get(schema)
  if (cached !== undefined) return cached
  const { dialect } = dialectOf(schema)
  let prepared: Prepared
  try {
    checkKeywords(schema, dialect)
    prepared = prepare(schema, dialect)
  } catch (error) {
    if (error instanceof TypeError && /^(?:Invalid|Unsupported) JSON Schema/.test(error.message)) throw error
    // A schema nested deeper than the stack, an `$id` that is not a URI, or one the interpreter's
    // indexing refuses (two subschemas claiming one URI).
    const reason = error instanceof Error ? error.message : String(error)
    throw new TypeError(`Invalid JSON Schema: ${oneLine(reason)}`, { cause: error })
  }
  const validator: Validator = value => run(prepared, value)
  cache.set(schema, validator)
  return validator
}

/**
 * The interpreted validator as a {@link JsonSchemaCompiler}: what `jsonSchemaValidator:
 * 'interpreted'` selects, and what `'auto'` selects where code generation is refused.
 * @example
 * import { interpretedJsonSchema } from 'rxmcp/json-schema/interpreted'
 * const server = createServer(info, { jsonSchemaValidator: interpretedJsonSchema })
 * @see compiledJsonSchema in rxmcp/json-schema
 */
export const interpretedJsonSchema: JsonSchemaCompiler = Object.freeze({ compileSchema, isSecureSchema })

/** Validators by schema object; weak, so a dropped tool takes its validator with it. */
const cache = new WeakMap<object, Validator>()

/**
 * The base URI of a schema without `$id`, as in ./json-schema.ts: the `.invalid` TLD (RFC 2606)
 * can never be fetched, and relative `$id`s resolve against it.
 */
const BASE_ID = 'https://rxmcp.invalid/schema.json'
const BASE_URL = new URL(BASE_ID)

/** A schema made ready for the interpreter. */
interface Prepared {
  /** The rewritten deep copy the interpreter runs. */
  readonly root: Schema
  /** Every subschema by absolute URI (the interpreter's index). */
  readonly lookup: Record<string, Schema | boolean>
  /** Subschemas whose `pattern` stands for a format, with the format's name (for the message). */
  readonly formats: WeakMap<object, string>
}

/** The properties the interpreter's indexing defines (not enumerable) on each subschema. */
interface Indexed { __absolute_uri__?: string; __absolute_ref__?: string; __absolute_recursive_ref__?: string }

/**
 * The copy the interpreter runs, indexed, with every `$ref` checked to resolve. The interpreter
 * applies every keyword it knows whatever the dialect, and defines index properties on the objects
 * it is given, hence the copy: keywords the dialect lacks are left out of it (as ajv ignores them),
 * formats become patterns, `$dynamicRef` a `$ref`.
 */
function prepare(schema: object, dialect: Dialect): Prepared {
  const formats = new WeakMap<object, string>()
  const dynamic = { anchors: new Map<string, Record<string, unknown>[]>(), refs: [] as Record<string, unknown>[] }
  const root = copySchema(schema, dialect, formats, dynamic) as Schema
  if (root.$id === undefined || root.$id === '') root.$id = BASE_ID
  resolveDynamicRefs(dynamic)
  const lookup = dereference(root, Object.create(null) as Record<string, Schema>, BASE_URL) as Record<string, Schema | boolean>
  fixAnchors(root, dialect, lookup)
  checkRefs(root, dialect, lookup)
  return { root, lookup, formats }
}

/** What the copy found of `$dynamicAnchor`s (by name) and `$dynamicRef`s (the nodes holding one). */
interface DynamicRefs { anchors: Map<string, Record<string, unknown>[]>; refs: Record<string, unknown>[] }

/** Keywords the interpreter would apply although the dialect (as ajv reads it) does not have them. */
const FOREIGN: Readonly<Record<Dialect, ReadonlySet<string>>> = {
  'draft-07': new Set(['prefixItems', 'dependentRequired', 'dependentSchemas', 'unevaluatedItems', 'unevaluatedProperties', 'minContains', 'maxContains', '$anchor', '$recursiveRef', '$recursiveAnchor', '$dynamicRef', '$dynamicAnchor']),
  '2019-09': new Set(['prefixItems']),
  '2020-12': new Set(['$recursiveRef', '$recursiveAnchor']),
}

/** The pattern that stands for each format the interpreter checks by pattern. */
const FORMAT_PATTERNS: Readonly<Record<string, string>> = {
  email: EMAIL_PATTERN,
  uri: URI_PATTERN,
  uuid: UUID_PATTERN,
  date: DATE_PATTERN,
  // The interpreter's own `date-time` check stays beside this: it covers the calendar and the leap
  // second, and accepts a space for the `T`, which this refuses.
  'date-time': DATE_TIME_SHAPE,
}

/** A deep copy of the subschema `node`, rewritten for the interpreter (see {@link prepare}). */
function copySchema(node: unknown, dialect: Dialect, formats: WeakMap<object, string>, dynamic: DynamicRefs): unknown {
  if (!isObject(node)) return node
  const out: Record<string, unknown> = {}
  for (const key of Object.keys(node)) {
    if (FOREIGN[dialect].has(key)) continue
    const value = node[key]
    switch (subschemaKind(key, dialect)) {
      case 'schema':
        define(out, key, copySchema(value, dialect, formats, dynamic))
        break
      case 'list':
        define(out, key, (value as unknown[]).map(sub => copySchema(sub, dialect, formats, dynamic)))
        break
      case 'items':
        define(out, key, Array.isArray(value) ? value.map(sub => copySchema(sub, dialect, formats, dynamic)) : copySchema(value, dialect, formats, dynamic))
        break
      case 'map':
      case 'dependencies': {
        const map: Record<string, unknown> = {}
        for (const name of Object.keys(value as object)) {
          const sub = (value as Record<string, unknown>)[name]
          define(map, name, Array.isArray(sub) ? [...sub] : copySchema(sub, dialect, formats, dynamic))
        }
        define(out, key, map)
        break
      }
      default:
        // Data (enum, const, default, examples) and annotations: copied, since the interpreter
        // indexes objects under unknown keywords as if they were schemas.
        define(out, key, copyJson(value))
    }
  }
  const format = out.format
  if (typeof format === 'string') {
    const pattern = FORMAT_PATTERNS[format]
    // Only the five formats are checked; any other is an annotation (the interpreter knows more).
    if (format !== 'date-time') delete out.format
    if (pattern !== undefined) addPattern(out, pattern, format, formats)
  }
  if (typeof out.$dynamicAnchor === 'string') {
    // JSON Schema 2020-12: a dynamic anchor is also a plain one, which `$ref` may name.
    out.$anchor ??= out.$dynamicAnchor
    const declared = dynamic.anchors.get(out.$dynamicAnchor)
    if (declared === undefined) dynamic.anchors.set(out.$dynamicAnchor, [out])
    else declared.push(out)
  }
  if (typeof out.$dynamicRef === 'string') dynamic.refs.push(out)
  return out
}

/** Makes `node` also match `pattern`, remembering that a failure there means the format failed. */
function addPattern(node: Record<string, unknown>, pattern: string, format: string, formats: WeakMap<object, string>): void {
  if (node.pattern === undefined) {
    node.pattern = pattern
    formats.set(node, format)
    return
  }
  // The schema has a pattern of its own: both go into an allOf, its own first (ajv checks the
  // pattern before the format, so a value failing both is said to fail the pattern).
  const check = { pattern }
  formats.set(check, format)
  node.allOf = [...(Array.isArray(node.allOf) ? node.allOf : []), { pattern: node.pattern }, check]
  delete node.pattern
}

/**
 * Turns each `$dynamicRef` into a `$ref` (the interpreter knows only `$ref`). This is exact when
 * the `$dynamicAnchor` it names is declared once in the schema: JSON Schema 2020-12 then resolves
 * it like `$ref` whatever the path. The declaration also gets an `$anchor` of the same name, so
 * that the `$ref` finds it. When a name is declared more than once, the dynamic scope decides,
 * which a static rewrite cannot follow: refused.
 */
function resolveDynamicRefs({ anchors, refs }: DynamicRefs): void {
  for (const node of refs) {
    const ref = node.$dynamicRef as string
    const name = ref.slice(ref.indexOf('#') + 1)
    const declared = ref.includes('#') ? anchors.get(name) : undefined
    if (declared !== undefined && declared.length > 1) {
      throw new TypeError(`Unsupported JSON Schema: $dynamicRef ${JSON.stringify(ref)} names a $dynamicAnchor declared ${declared.length} times, which the interpreted validator cannot resolve (use $ref, or the compiled validator)`)
    }
    for (const anchor of declared ?? []) {
      if (anchor.$anchor !== undefined && anchor.$anchor !== name) {
        throw new TypeError(`Unsupported JSON Schema: a subschema with both $anchor ${JSON.stringify(anchor.$anchor)} and $dynamicAnchor ${JSON.stringify(name)}, which the interpreted validator cannot resolve`)
      }
      anchor.$anchor = name
    }
    delete node.$dynamicRef
    if (node.$ref === undefined) node.$ref = ref
    else node.allOf = [...(Array.isArray(node.allOf) ? node.allOf : []), { $ref: ref }]
  }
}

/**
 * Puts each plain-name anchor (`$anchor`, or a draft-07 `$id: '#name'`) under the URI of its own
 * schema resource only. The interpreter's indexing also files an anchor inside an embedded
 * resource (a subschema with an `$id`) under the enclosing resources' URIs, where it can shadow
 * an anchor of the same name: `$ref: '#a'` would then land in the wrong subschema.
 */
function fixAnchors(root: Schema, dialect: Dialect, lookup: Record<string, Schema | boolean>): void {
  for (const uri of Object.keys(lookup)) if (/#[^/]/.test(uri)) delete lookup[uri]
  const visit = (node: unknown, base: URL): void => {
    if (!isObject(node)) return
    if (typeof node.$id === 'string') {
      const id = new URL(node.$id, base)
      if (id.hash.length > 1) lookup[id.href] = node as Schema
      else base = new URL(id.href.replace(/#$/, ''))
    }
    if (typeof node.$anchor === 'string') lookup[new URL(`#${node.$anchor}`, base).href] = node as Schema
    forEachSubschema(node, dialect, sub => visit(sub, base))
  }
  visit(root, BASE_URL)
}

/** Calls `visit` with each direct subschema of `node` (by the dialect's keywords). */
function forEachSubschema(node: Record<string, unknown>, dialect: Dialect, visit: (sub: unknown) => void): void {
  for (const key of Object.keys(node)) {
    const kind = subschemaKind(key, dialect)
    const value = node[key]
    if (kind === 'schema') visit(value)
    else if (kind === 'list' || (kind === 'items' && Array.isArray(value))) for (const sub of value as unknown[]) visit(sub)
    else if (kind === 'items') visit(value)
    else if (kind === 'map' || kind === 'dependencies') for (const sub of Object.values(value as object)) visit(sub)
  }
}

/**
 * Throws the TypeError ajv throws for a `$ref` that resolves to nothing in the schema: a remote
 * one (nothing is fetched, MCP 2026-07-28) or a typo. The interpreter would throw on the value
 * that first reaches it instead; a tool must fail at registration.
 */
function checkRefs(node: unknown, dialect: Dialect, lookup: Record<string, unknown>): void {
  if (!isObject(node)) return
  const indexed = node as Indexed
  for (const [keyword, target] of [['$ref', indexed.__absolute_ref__], ['$recursiveRef', indexed.__absolute_recursive_ref__]] as const) {
    if (node[keyword] === undefined || (target !== undefined && lookup[target] !== undefined)) continue
    const base = (indexed.__absolute_uri__ ?? BASE_ID).replace(/#.*$/, '')
    const from = base === BASE_ID ? '(root)' : base.startsWith(BASE_URL.origin + '/') ? base.slice(BASE_URL.origin.length + 1) : base
    throw new TypeError(`Invalid JSON Schema: can't resolve reference ${oneLine(String(node[keyword]))} from id ${oneLine(from)}`)
  }
  forEachSubschema(node, dialect, sub => checkRefs(sub, dialect, lookup))
}

/**
 * One validation: the interpreter's verdict, in the shape and words of ./json-schema.ts. `isJson`
 * when `value` came from JSON.parse here: then nothing but a thrown stack can stop the interpreter.
 */
function run(prepared: Prepared, value: unknown, isJson = false): ValidationResult {
  let outcome
  try {
    outcome = validate(value, prepared.root, '2020-12', prepared.lookup as Record<string, Schema>, true)
  } catch (error) {
    // Recursive schemas recurse on the data: a deeply nested value can exhaust the stack. That is
    // the value's fault, so it is a verdict and not an exception.
    if (error instanceof RangeError) return TOO_DEEP
    // The interpreter writes each member name it visits into a URI, which a name holding a lone
    // surrogate (valid JSON, not valid Unicode) cannot be. Refused rather than let through.
    if (error instanceof URIError) return NOT_UNICODE
    // A value that is not JSON (`undefined`, a function) stops the interpreter.
    if (isJson) throw error
    return runOnJson(prepared, value)
  }
  return outcome.valid ? VALID : explain(prepared, value, outcome.errors)
}

/** The verdict on what `value` serializes to (its JSON form), for a value that is not JSON itself. */
function runOnJson(prepared: Prepared, value: unknown): ValidationResult {
  let json: unknown
  try {
    const text = JSON.stringify(value)
    json = text === undefined ? NOT_JSON : JSON.parse(text)
  } catch {
    json = NOT_JSON
  }
  if (json === NOT_JSON) return invalidResult([{ path: '', message: 'must be a JSON value' }])
  return run(prepared, json, true)
}

/** Stands for a value JSON.stringify cannot write. */
const NOT_JSON = Symbol('not JSON')

const NOT_UNICODE: ValidationResult = Object.freeze({
  valid: false,
  message: 'property names must be well-formed Unicode',
  errors: Object.freeze([Object.freeze({ path: '', message: 'property names must be well-formed Unicode' })]),
})

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
function explain(prepared: Prepared, value: unknown, errors: readonly OutputUnit[]): ValidationResult {
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
      const missing = (limit as string[]).find(name => !isObject(data) || !Object.hasOwn(data, name))
      return `must have required property '${missing}'`
    }
    case 'dependentRequired':
    case 'dependencies': {
      for (const [name, needs] of Object.entries(limit as Record<string, unknown>)) {
        if (!isObject(data) || !Object.hasOwn(data, name) || !Array.isArray(needs)) continue
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
    if (!isObject(node) && !Array.isArray(node)) return undefined
    const indexed = node as Indexed
    if (token === '$ref' && typeof indexed.__absolute_ref__ === 'string') node = prepared.lookup[indexed.__absolute_ref__]
    else if (token === '$recursiveRef' && typeof indexed.__absolute_recursive_ref__ === 'string') node = prepared.lookup[indexed.__absolute_recursive_ref__]
    else node = (node as Record<string, unknown>)[unescapeToken(decodeURIComponent(token))]
  }
  return isObject(node) ? node : undefined
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

/** A deep copy of JSON data, `__proto__` members kept as data. */
function copyJson(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(copyJson)
  if (!isObject(value)) return value
  const out: Record<string, unknown> = {}
  for (const key of Object.keys(value)) define(out, key, copyJson(value[key]))
  return out
}

/**
 * Sets `key` on a fresh object as an own data property: assigning `__proto__` would set the
 * prototype instead, turning a property named `__proto__` into an inherited one.
 */
function define(target: Record<string, unknown>, key: string, value: unknown): void {
  if (key === '__proto__') Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true })
  else target[key] = value
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}
