import { Ajv } from 'ajv'
import { Ajv2020 } from 'ajv/dist/2020.js'
import { Ajv2019 } from 'ajv/dist/2019.js'
import type { ValidateFunction } from 'ajv'

/** The outcome of validating one value. */
export type ValidationResult =
  | { valid: true }
  | { valid: false; message: string; errors: readonly { path: string; message: string }[] }

/** A compiled schema: value in, verdict out. */
export type Validator = (value: unknown) => ValidationResult

type Dialect = '2020-12' | '2019-09' | 'draft-07'

/**
 * Compiles a JSON Schema once and returns its validator.
 *
 * The dialect follows `$schema`: 2020-12 when absent (MCP 2025-11-25 makes it the default for tool
 * schemas), 2019-09, or draft-07 (and draft-06/04 ids, read as draft-07). Validators are cached per
 * schema object, so a tool registered once costs a WeakMap lookup per call. Unknown keywords are
 * allowed (schemas in the wild carry them); the formats email, uri, date, date-time and uuid are
 * checked, other formats are ignored.
 *
 * @throws TypeError when the schema itself is invalid, so registration fails fast.
 * @example
 * const validate = compileSchema({ type: 'object', properties: { text: { type: 'string' } } })
 * validate({ text: 1 }) // { valid: false, message: '/text: must be string', ... }
 */
export function compileSchema(schema: object): Validator {
  const cached = cache.get(schema)
  if (cached !== undefined) return cached
  const dialect = dialectOf(schema)
  let compiled: ValidateFunction
  try {
    compiled = instance(dialect).compile(schema)
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error)
    if (/already exists/.test(message)) {
      // Two tools may reuse one `$id`; each compiles in an instance of its own rather than clash.
      try {
        compiled = createAjv(dialect).compile(schema)
      } catch (retry) {
        throw new TypeError(`Invalid JSON Schema: ${retry instanceof Error ? retry.message : String(retry)}`)
      }
    } else {
      throw new TypeError(`Invalid JSON Schema: ${message}`)
    }
  }
  const validator: Validator = value => {
    if (compiled(value)) return VALID
    const errors = (compiled.errors ?? []).map(error => ({ path: error.instancePath || '/', message: error.message ?? 'is invalid' }))
    return { valid: false, message: errors.map(error => `${error.path}: ${error.message}`).join('; ') || 'invalid', errors }
  }
  cache.set(schema, validator)
  return validator
}

/** True when the schema's root says `type: 'object'`, as MCP requires of tool schemas. */
export function isObjectSchema(schema: unknown): boolean {
  return typeof schema === 'object' && schema !== null && (schema as { type?: unknown }).type === 'object'
}

/**
 * The answer of an elicitation form with the schema's defaults filled in for fields the user left
 * out. Never mutates its inputs; keys that could reach a prototype are dropped.
 * @example
 * applyDefaults({ type: 'object', properties: { n: { type: 'number', default: 3 } } }, {}) // { n: 3 }
 */
export function applyDefaults(schema: object, content: Record<string, unknown> | undefined): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  if (content !== undefined && content !== null) {
    for (const [key, value] of Object.entries(content)) if (!FORBIDDEN_KEYS.has(key)) out[key] = value
  }
  const properties = (schema as { properties?: unknown }).properties
  if (typeof properties !== 'object' || properties === null) return out
  for (const [key, property] of Object.entries(properties)) {
    if (FORBIDDEN_KEYS.has(key) || Object.hasOwn(out, key)) continue
    if (typeof property === 'object' && property !== null && Object.hasOwn(property, 'default')) out[key] = (property as { default: unknown }).default
  }
  return out
}

const FORBIDDEN_KEYS = new Set(['__proto__', 'constructor', 'prototype'])
const VALID: ValidationResult = Object.freeze({ valid: true })
const cache = new WeakMap<object, Validator>()
const instances = new Map<Dialect, Ajv>()

function dialectOf(schema: object): Dialect {
  const id = (schema as { $schema?: unknown }).$schema
  if (typeof id !== 'string') return '2020-12'
  if (id.includes('2020-12')) return '2020-12'
  if (id.includes('2019-09')) return '2019-09'
  if (/draft-0[4-7]/.test(id)) return 'draft-07'
  throw new TypeError(`Unsupported JSON Schema dialect: ${id}`)
}

function instance(dialect: Dialect): Ajv {
  let ajv = instances.get(dialect)
  if (ajv === undefined) {
    ajv = createAjv(dialect)
    instances.set(dialect, ajv)
  }
  return ajv
}

function createAjv(dialect: Dialect): Ajv {
  const options = { strict: false, allErrors: false, validateSchema: true, addUsedSchema: false }
  const ajv: Ajv = dialect === '2020-12' ? new Ajv2020(options) : dialect === '2019-09' ? new Ajv2019(options) : new Ajv(options)
  for (const [name, check] of Object.entries(FORMATS)) ajv.addFormat(name, check)
  return ajv
}

/** Formats checked without ajv-formats: small, documented rules. */
const FORMATS: Record<string, RegExp | ((value: string) => boolean)> = {
  // One @, something before it, a dot in the domain, no spaces: what forms need, not RFC 5322.
  email: /^[^\s@]+@[^\s@]+\.[^\s@]+$/,
  uri: value => { try { return new URL(value).protocol.length > 1 } catch { return false } },
  date: value => /^\d{4}-\d{2}-\d{2}$/.test(value) && isRealDate(value),
  'date-time': value => /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/.test(value) && isRealDate(value.slice(0, 10)),
  uuid: /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i,
}

function isRealDate(text: string): boolean {
  const [year, month, day] = text.split('-').map(Number) as [number, number, number]
  const date = new Date(Date.UTC(year, month - 1, day))
  return date.getUTCFullYear() === year && date.getUTCMonth() === month - 1 && date.getUTCDate() === day
}
