/**
 * Standard Schema v1 (https://standardschema.dev): the interface zod 4, valibot, arktype and others
 * implement, declared here so that no schema library is a dependency of rxmcp. Also the optional
 * Standard JSON Schema converter (`~standard.jsonSchema`) some of them expose, and the two things the
 * server does with such a schema: validate a value and describe it as JSON Schema for the wire.
 *
 * Nothing here loads a schema library or ajv: a schema brings its own validator.
 */
import type { ValidationIssue } from './json-schema.ts'

/**
 * A schema any Standard Schema v1 library builds: `~standard.validate` checks a value, and the
 * optional `~standard.types` carries the input and output types for inference only.
 */
export interface StandardSchemaV1<Input = unknown, Output = Input> {
  readonly '~standard': StandardSchemaProps<Input, Output>
}

/** The `~standard` property of a {@link StandardSchemaV1}. */
export interface StandardSchemaProps<Input = unknown, Output = Input> {
  readonly version: 1
  /** The library, e.g. `'zod'`, `'valibot'`, `'arktype'`. */
  readonly vendor: string
  /** Checks a value; may answer synchronously or with a Promise (async refinements). */
  readonly validate: (value: unknown, options?: StandardValidateOptions) => StandardResult<Output> | Promise<StandardResult<Output>>
  /** Types for inference only; absent at runtime. */
  readonly types?: { readonly input: Input; readonly output: Output } | undefined
  /** Standard JSON Schema: how the schema describes itself as JSON Schema, where the library offers it (zod ≥ 4.2). */
  readonly jsonSchema?: StandardJsonSchemaConverter | undefined
}

/** Options a library may read in `validate`. */
export interface StandardValidateOptions {
  readonly libraryOptions?: Record<string, unknown> | undefined
}

/** The answer of `validate`: the (possibly transformed) value, or the issues. */
export type StandardResult<Output> =
  | { readonly value: Output; readonly issues?: undefined }
  | { readonly issues: ReadonlyArray<StandardIssue> }

/** One reason a value failed, with where it is (keys from the root) when known. */
export interface StandardIssue {
  readonly message: string
  readonly path?: ReadonlyArray<PropertyKey | { readonly key: PropertyKey }> | undefined
}

/** Standard JSON Schema v1: the converter of a schema's input or output type to JSON Schema. */
export interface StandardJsonSchemaConverter {
  /** May throw when the schema cannot be expressed, or the target is not supported. */
  readonly input: (options: StandardJsonSchemaOptions) => Record<string, unknown>
  readonly output: (options: StandardJsonSchemaOptions) => Record<string, unknown>
}

/** Options of a {@link StandardJsonSchemaConverter}. */
export interface StandardJsonSchemaOptions {
  /** `'draft-2020-12'`, `'draft-07'`, `'openapi-3.0'`, or a library's own. */
  readonly target: string
  readonly libraryOptions?: Record<string, unknown> | undefined
}

/** The type a schema accepts. */
export type InferInput<S extends StandardSchemaV1> = NonNullable<S['~standard']['types']>['input']

/** The type a schema gives back after validation (after defaults and transforms). */
export type InferOutput<S extends StandardSchemaV1> = NonNullable<S['~standard']['types']>['output']

/**
 * The verdict on one value, in the shape of the JSON Schema validator's (`compileSchema`), plus
 * the value the schema gave back. When invalid, `message` is one line such as
 * `/a: Invalid input: expected number, received string`.
 */
export type StandardVerdict<T> =
  | { valid: true; value: T }
  | { valid: false; message: string; errors: readonly ValidationIssue[] }

/**
 * True when `value` implements Standard Schema v1. A function counts too, since some libraries'
 * schemas are callable (arktype).
 */
export function isStandardSchema(value: unknown): value is StandardSchemaV1 {
  if ((typeof value !== 'object' && typeof value !== 'function') || value === null) return false
  const props = (value as { '~standard'?: unknown })['~standard']
  return typeof props === 'object' && props !== null && (props as { version?: unknown }).version === 1
    && typeof (props as { validate?: unknown }).validate === 'function'
}

/**
 * Validates `value` with the schema's own validator and turns its answer into a verdict.
 * Synchronous when the schema answers synchronously, a Promise otherwise.
 *
 * Throws (or rejects) only when the schema's validator does.
 * @example
 * validateStandard(z.object({ a: z.number() }), { a: 'x' })
 * // { valid: false, message: '/a: Invalid input: expected number, received string', errors: [...] }
 */
export function validateStandard<T>(schema: StandardSchemaV1<unknown, T>, value: unknown): StandardVerdict<T> | Promise<StandardVerdict<T>> {
  const result = schema['~standard'].validate(value)
  if (isThenable(result)) return Promise.resolve(result).then(verdictOf)
  return verdictOf(result)
}

/**
 * The JSON Schema (2020-12) of a schema's input or output type, from the schema's Standard JSON
 * Schema converter, or `undefined` when the schema has none. A `$schema` naming 2020-12 is left
 * out: it is the default dialect of MCP tool schemas (2025-11-25), and older clients that read
 * draft-07 would choke on it.
 *
 * @throws whatever the converter throws (a schema it cannot express).
 */
export function standardJsonSchema(schema: StandardSchemaV1, direction: 'input' | 'output'): Record<string, unknown> | undefined {
  const converter = schema['~standard'].jsonSchema
  if (typeof converter?.[direction] !== 'function') return undefined
  const converted = converter[direction]({ target: 'draft-2020-12' })
  if (typeof converted !== 'object' || converted === null) return undefined
  if (converted.$schema !== DRAFT_2020_12) return converted
  const { $schema: _dialect, ...rest } = converted
  return rest
}

const DRAFT_2020_12 = 'https://json-schema.org/draft/2020-12/schema'

function verdictOf<T>(result: StandardResult<T>): StandardVerdict<T> {
  if (result.issues === undefined) return { valid: true, value: (result as { value: T }).value }
  const errors = result.issues.map(issue => ({ path: pointerOf(issue.path), message: String(issue.message) }))
  const message = errors.map(error => (error.path === '' ? error.message : `${error.path}: ${error.message}`)).join('; ')
  return { valid: false, message: oneLine(message || 'value is invalid'), errors }
}

/** An issue's path as a JSON Pointer (RFC 6901), as the JSON Schema validator reports paths. */
function pointerOf(path: StandardIssue['path']): string {
  if (path === undefined) return ''
  let pointer = ''
  for (const segment of path) {
    const key = typeof segment === 'object' && segment !== null ? segment.key : segment
    pointer += `/${String(key).replaceAll('~', '~0').replaceAll('/', '~1')}`
  }
  return pointer
}

/** Escapes control characters, so a message stays one line in a tool result. */
function oneLine(text: string): string {
  return text.replace(/[\u0000-\u001f\u007f\u2028\u2029]/g, char => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`)
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return typeof (value as { then?: unknown } | null)?.then === 'function'
}
