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
import { dereference, validate, type Schema } from '@cfworker/json-schema'
import { checkKeywords, subschemaKind } from './check-keywords.ts'
import { dialectOf, type Dialect, type JsonSchemaCompiler, type ValidationResult, type Validator } from './schema-rules.ts'
import { DATE_PATTERN, DATE_TIME_SHAPE, EMAIL_PATTERN, URI_PATTERN, UUID_PATTERN } from './schema-formats.ts'
import { TOO_DEEP, VALID, invalidResult, oneLine } from './schema-messages.ts'
import { isJsonObject } from './jsonrpc/guards.ts'
import { explain, type Indexed, type Prepared } from './interpreted-failures.ts'
import { isSecureSchema } from './secure-schema.ts'

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
  if (!isJsonObject(node)) return node
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
    if (!isJsonObject(node)) return
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
  if (!isJsonObject(node)) return
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

/** A deep copy of JSON data, `__proto__` members kept as data. */
function copyJson(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(copyJson)
  if (!isJsonObject(value)) return value
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
