/**
 * The compiled JSON Schema validator for tool `inputSchema`/`outputSchema` and elicitation
 * `requestedSchema`: compile once, validate per call. Validation runs on ajv, which generates code
 * with `new Function`; where code generation is refused (Cloudflare Workers, a CSP without
 * 'unsafe-eval') the interpreter in ./json-schema-interpreted.ts takes its place. This module is
 * heavy (ajv and its dialects): the runtime loads it on first use through ./validator.ts, so
 * importing rxmcp does not load it, and it is the only module that imports ajv.
 */
import { Ajv } from 'ajv'
import { Ajv2019 } from 'ajv/dist/2019.js'
import { Ajv2020 } from 'ajv/dist/2020.js'
import type { AnySchemaObject, ErrorObject, Format, Options, ValidateFunction } from 'ajv'
import draft06MetaSchema from 'ajv/dist/refs/json-schema-draft-06.json' with { type: 'json' }
import { dialectOf, type Dialect, type JsonSchemaCompiler, type Validator } from './schema-rules.ts'
import { DATE_PATTERN, EMAIL_PATTERN, URI_PATTERN, UUID_PATTERN, isDateTime } from './schema-formats.ts'
import { TOO_DEEP, VALID, constMessage, enumMessage, extraPropertyMessage, invalidResult, oneLine } from './schema-messages.ts'
import { isSecureSchema } from './secure-schema.ts'
import { isMultipleOf } from './multiple-of.ts'
import { duplicateItems, jsonEqual } from './json-equal.ts'

export type { JsonSchemaCompiler, JsonSchemaValidatorOption, ValidationIssue, ValidationResult, Validator } from './schema-rules.ts'
export { applyDefaults, isObjectSchema } from './schema-rules.ts'
export { isSecureSchema } from './secure-schema.ts'

/**
 * Compiles a JSON Schema once and returns its validator.
 *
 * The dialect follows `$schema`: 2020-12 when it is absent (MCP 2025-11-25, SEP-1613), otherwise
 * 2020-12, 2019-09, draft-07 or draft-06 (http or https, with or without a trailing `#`). Unknown
 * keywords and formats are ignored, since schemas in the wild carry them; the formats `email`,
 * `uri`, `date`, `date-time` and `uuid` are checked. `$ref` resolves inside the schema (`#/$defs/x`,
 * `#/definitions/x`, embedded `$id`s, recursion), never across schemas: two tools may use the same
 * `$id`, and neither can see the other's. `required` and `properties` look at own properties only;
 * a property named `__proto__` under `properties` goes unchecked (ajv skips it by design).
 *
 * Validators are cached per schema object, so compiling the same object again is a WeakMap lookup.
 * Treat a schema as frozen once compiled: later edits to it are not seen.
 *
 * @throws TypeError when `schema` is not an object, names a dialect we do not support, or is not a
 *   valid schema (the message says why), so a bad tool fails at registration and not per call.
 * @example
 * const validate = compileSchema({ type: 'object', properties: { text: { type: 'string' } } })
 * validate({ text: 1 }) // { valid: false, message: '/text: must be string', errors: [...] }
 * @see isObjectSchema
 */
export function compileSchema(schema: object): Validator {
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) {
    throw new TypeError('A JSON Schema must be an object')
  }
  const cached = cache.get(schema)
  if (cached !== undefined) return cached
  const compiled = compileWithAjv(schema)
  const validator: Validator = value => {
    try {
      if (compiled(value)) return VALID
    } catch (error) {
      // Recursive schemas recurse on the data: a deeply nested value can exhaust the stack. That is
      // the value's fault, so it is a verdict and not an exception.
      if (error instanceof RangeError) return TOO_DEEP
      throw error
    }
    return invalid(compiled.errors ?? [])
  }
  cache.set(schema, validator)
  return validator
}

/**
 * The compiled validator (ajv) as a {@link JsonSchemaCompiler}: what `jsonSchemaValidator:
 * 'compiled'` selects, and what `'auto'` selects where code generation is allowed.
 * @example
 * import { compiledJsonSchema } from 'rxmcp/json-schema'
 * const server = createServer(info, { jsonSchemaValidator: compiledJsonSchema })
 * @see interpretedJsonSchema in rxmcp/json-schema/interpreted
 */
export const compiledJsonSchema: JsonSchemaCompiler = Object.freeze({ compileSchema, isSecureSchema })

/** Compiled validators by schema object; weak, so a dropped tool takes its validator with it. */
const cache = new WeakMap<object, Validator>()

/**
 * Compiles on the shared instance for the schema's dialect and turns any failure into a TypeError.
 *
 * ajv is handed a shallow copy, never the caller's object. ajv caches by object identity and does
 * so before checking the schema against its meta-schema, so compiling an invalid object twice would
 * wave it through the second time; a fresh copy is never seen twice. The copy also carries ajv's
 * spelling of `$schema` (https for http, say). `$ref`s resolve against the root, which the copy
 * reproduces key for key, so it validates exactly as the original would.
 *
 * A schema without `$id` gets BASE_ID on the copy. JSON Schema leaves such a schema's base URI to
 * the implementation, and ajv, with `addUsedSchema` off, cannot resolve `$ref: '#'` (the root
 * recursion zod and others emit) against an empty one.
 */
function compileWithAjv(schema: object): ValidateFunction {
  const { dialect, metaSchema } = dialectOf(schema)
  const target: Record<string, unknown> = { ...schema }
  if (target.$id === undefined || target.$id === '') target.$id = BASE_ID
  if (metaSchema !== undefined) target.$schema = metaSchema
  const generation = currentGeneration(dialect)
  // Failures count too: ajv keeps the copy in its cache either way.
  generation.compiled += 1
  try {
    return generation.ajv.compile(target)
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error)
    throw new TypeError(`Invalid JSON Schema: ${oneLine(reason.replaceAll(BASE_ID, '(root)'))}`, { cause: error })
  }
}

/** The base URI of a schema without `$id`. The `.invalid` TLD (RFC 2606) can never be fetched. */
const BASE_ID = 'https://rxmcp.invalid/schema.json'

/**
 * The shared ajv instance of each dialect, created on first use. `compiled` counts what it has
 * compiled: ajv's code scope keeps every validator it ever built (a few KB each), so an instance
 * is retired after GENERATION_SIZE compiles and becomes garbage once its validators are. Servers
 * compile a handful of schemas and never get there; a client recompiling every `tools/list` does.
 */
const generations = new Map<Dialect, { ajv: AjvInstance; compiled: number }>()
const GENERATION_SIZE = 256

type AjvInstance = Ajv | Ajv2019 | Ajv2020

function currentGeneration(dialect: Dialect): { ajv: AjvInstance; compiled: number } {
  let generation = generations.get(dialect)
  if (generation === undefined || generation.compiled >= GENERATION_SIZE) {
    generation = { ajv: createAjv(dialect), compiled: 0 }
    generations.set(dialect, generation)
  }
  return generation
}

function createAjv(dialect: Dialect): AjvInstance {
  const options: Options = {
    // Tool schemas in the wild carry keywords and formats of their own; ignore what we do not know.
    strict: false,
    // The first error is enough to reject a call, and stopping there is cheaper.
    allErrors: false,
    // Never register a schema under its `$id`: two tools with one `$id` would collide ("already
    // exists"), and one tool's schema could `$ref` another's. Each schema stays self-contained.
    addUsedSchema: false,
    // Without this `required: ['toString']` is met by Object.prototype, and a property named
    // `constructor` is checked against Object itself.
    ownProperties: true,
    // With strict off ajv reports ignored formats on the console; a library keeps quiet.
    logger: false,
    formats: FORMATS,
  }
  const ajv = dialect === '2020-12' ? new Ajv2020(options) : dialect === '2019-09' ? new Ajv2019(options) : new Ajv(options)
  if (dialect === 'draft-07') ajv.addMetaSchema(draft06MetaSchema)
  // ajv divides in floating point, so 1.13 is no multiple of 0.01 there; the decimal check is exact.
  ajv.removeKeyword('multipleOf')
  ajv.addKeyword({ keyword: 'multipleOf', type: 'number', schemaType: 'number', errors: true, validate: checkMultipleOf })
  // ajv's equality calls a value's own `toString`/`valueOf` members, so `{"toString": 1}` made it
  // throw; these three compare with jsonEqual instead.
  for (const keyword of ['const', 'enum', 'uniqueItems']) ajv.removeKeyword(keyword)
  ajv.addKeyword({ keyword: 'const', errors: true, compile: compileConst })
  ajv.addKeyword({ keyword: 'enum', schemaType: 'array', errors: true, compile: compileEnum })
  ajv.addKeyword({ keyword: 'uniqueItems', type: 'array', schemaType: 'boolean', errors: true, compile: compileUniqueItems })
  return ajv
}

/** A keyword's validator as ajv calls it: its failure goes on the function, ajv adds the paths. */
type KeywordCheck = ((value: unknown) => boolean) & { errors?: Partial<ErrorObject>[] }

function compileConst(allowed: unknown): KeywordCheck {
  const check: KeywordCheck = value => {
    if (jsonEqual(value, allowed)) return true
    check.errors = [{ keyword: 'const', message: 'must be equal to constant', params: { allowedValue: allowed } }]
    return false
  }
  return check
}

function compileEnum(allowed: unknown[]): KeywordCheck {
  // Refused as ajv's own enum refuses it: no value could match.
  if (allowed.length === 0) throw new Error('enum must have non-empty array')
  // Scalars are looked up (a form's choices are strings), structures compared one by one.
  const scalars = new Set(allowed.filter(each => typeof each !== 'object' || each === null))
  const structures = allowed.filter(each => typeof each === 'object' && each !== null)
  const check: KeywordCheck = value => {
    if (typeof value !== 'object' || value === null ? scalars.has(value) : structures.some(each => jsonEqual(value, each))) return true
    check.errors = [{ keyword: 'enum', message: 'must be equal to one of the allowed values', params: { allowedValues: allowed } }]
    return false
  }
  return check
}

function compileUniqueItems(isUnique: boolean, parentSchema: AnySchemaObject): KeywordCheck {
  const check: KeywordCheck = value => {
    const pair = isUnique ? duplicateItems(parentSchema.items, value as unknown[]) : undefined
    if (pair === undefined) return true
    check.errors = [{ keyword: 'uniqueItems', message: `must NOT have duplicate items (items ## ${pair[0]} and ${pair[1]} are identical)`, params: { i: pair[1], j: pair[0] } }]
    return false
  }
  return check
}

/** The `multipleOf` keyword as ajv calls a keyword of its own: errors go on the function. */
function checkMultipleOf(this: unknown, divisor: number, value: number): boolean {
  if (isMultipleOf(value, divisor)) return true
  checkMultipleOf.errors = [{ keyword: 'multipleOf', message: `must be multiple of ${divisor}`, params: { multipleOf: divisor } }]
  return false
}
checkMultipleOf.errors = [] as Partial<ErrorObject>[]

function invalid(errors: readonly ErrorObject[]): ReturnType<Validator> {
  return invalidResult(errors.map(error => ({ path: error.instancePath, message: explain(error) })))
}

/** ajv's message, naming the offending property or the allowed values where ajv only hints at them. */
function explain(error: ErrorObject): string {
  const params = error.params as Record<string, unknown>
  switch (error.keyword) {
    case 'additionalProperties':
      return extraPropertyMessage('additionalProperties', String(params.additionalProperty))
    case 'unevaluatedProperties':
      return extraPropertyMessage('unevaluatedProperties', String(params.unevaluatedProperty))
    case 'enum':
      return enumMessage(Array.isArray(params.allowedValues) ? params.allowedValues : [])
    case 'const':
      return constMessage(params.allowedValue)
    default:
      return error.message ?? `fails ${error.keyword}`
  }
}

/**
 * The formats we check, without ajv-formats: the rules of ./schema-formats.ts, which the
 * interpreter applies too. ajv applies them to strings only.
 */
const FORMATS: Record<string, Format> = {
  email: new RegExp(EMAIL_PATTERN, 'u'),
  uri: new RegExp(URI_PATTERN, 'u'),
  date: new RegExp(DATE_PATTERN, 'u'),
  'date-time': isDateTime,
  uuid: new RegExp(UUID_PATTERN, 'u'),
}
