/**
 * The JSON Schema compiler for tool `inputSchema`/`outputSchema` and elicitation `requestedSchema`:
 * compile once, validate per call. Validation runs on ajv; the few string formats we check are
 * implemented here. This module is heavy (ajv and its dialects): the runtime loads it on first use
 * through `loadJsonSchema()` in ./validator.ts, so importing rxmcp does not load it.
 */
import { Ajv } from 'ajv'
import { Ajv2019 } from 'ajv/dist/2019.js'
import { Ajv2020 } from 'ajv/dist/2020.js'
import type { ErrorObject, Format, Options, ValidateFunction } from 'ajv'
import draft06MetaSchema from 'ajv/dist/refs/json-schema-draft-06.json' with { type: 'json' }
import secureMetaSchema from 'ajv/dist/refs/json-schema-secure.json' with { type: 'json' }
import { dialectOf, type Dialect, type ValidationResult, type Validator } from './schema-rules.ts'

export type { ValidationIssue, ValidationResult, Validator } from './schema-rules.ts'
export { applyDefaults, isObjectSchema } from './schema-rules.ts'

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
 * True when a schema from an untrusted source is safe to compile and run: ajv's "secure"
 * meta-schema refuses what can make validation slow on purpose (an unbounded `pattern` or
 * `format` on strings without `maxLength`, `uniqueItems` without `maxItems`, and the like). The
 * client checks servers' outputSchemas with it before validating their results.
 */
export function isSecureSchema(schema: object): boolean {
  secureCheck ??= new Ajv({ strict: false, logger: false }).compile(secureMetaSchema)
  try { return secureCheck(schema) === true } catch { return false }
}

/** The compiled secure meta-schema, made on first use. */
let secureCheck: ValidateFunction | undefined

/** Shared so that a passing call allocates nothing. */
const VALID: ValidationResult = Object.freeze({ valid: true })

const TOO_DEEP: ValidationResult = Object.freeze({
  valid: false,
  message: 'value is nested too deeply to validate',
  errors: Object.freeze([Object.freeze({ path: '', message: 'value is nested too deeply to validate' })]),
})

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
  if (dialect === '2020-12') return new Ajv2020(options)
  if (dialect === '2019-09') return new Ajv2019(options)
  const ajv = new Ajv(options)
  ajv.addMetaSchema(draft06MetaSchema)
  return ajv
}

function invalid(errors: readonly ErrorObject[]): ValidationResult {
  const issues = errors.map(error => ({ path: error.instancePath, message: explain(error) }))
  const message = issues.map(issue => (issue.path === '' ? issue.message : `${issue.path}: ${issue.message}`)).join('; ')
  return { valid: false, message: oneLine(message || 'value is invalid'), errors: issues }
}

/** ajv's message, naming the offending property or the allowed values where ajv only hints at them. */
function explain(error: ErrorObject): string {
  const params = error.params as Record<string, unknown>
  switch (error.keyword) {
    case 'additionalProperties':
      return `must NOT have additional property ${JSON.stringify(params.additionalProperty)}`
    case 'unevaluatedProperties':
      return `must NOT have unevaluated property ${JSON.stringify(params.unevaluatedProperty)}`
    case 'enum': {
      const allowed = Array.isArray(params.allowedValues) ? params.allowedValues : []
      // A long enum would swamp the line; the first few show the model what is expected.
      const shown = allowed.slice(0, 10).map(value => JSON.stringify(value)).join(', ')
      return `must be one of ${shown}${allowed.length > 10 ? ', …' : ''}`
    }
    case 'const':
      return `must be ${JSON.stringify(params.allowedValue)}`
    default:
      return error.message ?? `fails ${error.keyword}`
  }
}

/** Escapes line breaks and other controls (from property names, say) so a message stays one line. */
function oneLine(text: string): string {
  return text.replace(/[\u0000-\u001f\u007f\u2028\u2029]/g, char => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`)
}

/**
 * The formats we check, without ajv-formats. Each is a plain rule for the common shape, not a full
 * grammar. ajv applies them to strings only.
 */
const FORMATS: Record<string, Format> = {
  // Something without spaces or @, one @, a domain of dot-separated labels: what a form needs, not
  // the full RFC 5322 addr-spec;
  // quoted local parts and bare IP domains are rejected.
  email: /^[^\s@]+@[^\s@.]+(?:\.[^\s@.]+)+$/,
  // RFC 3986 absolute URI: a scheme, a colon, then only characters a URI may hold, with % only as
  // part of a %XX escape. Spaces, non-ASCII (IRIs) and relative references are rejected.
  uri: /^[a-z][a-z\d+.-]*:(?:[\w\-.~:/?#[\]@!$&'()*+,;=]|%[\da-f]{2})*$/i,
  // RFC 3339 full-date: a real calendar day.
  date: isDate,
  // RFC 3339 date-time: `T` (or `t`), seconds required, an offset (`Z` or ±hh:mm) required.
  'date-time': isDateTime,
  // RFC 9562 hex-and-dash form, any version or variant (the nil and max UUIDs included).
  uuid: /^[\da-f]{8}-[\da-f]{4}-[\da-f]{4}-[\da-f]{4}-[\da-f]{12}$/i,
}

function isDate(text: string): boolean {
  const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(text)
  if (match === null) return false
  const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])]
  return month >= 1 && month <= 12 && day >= 1 && day <= daysInMonth(year, month)
}

function daysInMonth(year: number, month: number): number {
  if (month === 2) return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28
  return month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31
}

function isDateTime(text: string): boolean {
  const match = /^(\d{4}-\d{2}-\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.\d+)?(?:[Zz]|([+-])(\d{2}):(\d{2}))$/.exec(text)
  if (match === null || !isDate(match[1])) return false
  const [hour, minute, second] = [Number(match[2]), Number(match[3]), Number(match[4])]
  const sign = match[5] === '-' ? -1 : 1
  const [offsetHour, offsetMinute] = [Number(match[6] ?? 0), Number(match[7] ?? 0)]
  if (hour > 23 || minute > 59 || second > 60 || offsetHour > 23 || offsetMinute > 59) return false
  // RFC 3339 allows second 60 for a leap second, which only ever happens at 23:59 UTC.
  if (second === 60) {
    const utcMinutes = (((hour * 60 + minute - sign * (offsetHour * 60 + offsetMinute)) % 1440) + 1440) % 1440
    return utcMinutes === 23 * 60 + 59
  }
  return true
}
