/*
 * JSON Schema as rxmcp reads it without a compiler: verdict types, the compiler contract,
 * dialects, the shape check and form defaults. A leaf, shared by the lazy validators
 * (./validator.ts) and the compilers they load (./json-schema.ts on ajv,
 * ./json-schema-interpreted.ts on @cfworker/json-schema), so none imports another statically.
 */

/** One reason a value failed: where (a JSON Pointer, `''` for the root) and what. */
export interface ValidationIssue {
  readonly path: string
  readonly message: string
}

/**
 * The verdict on one value. When invalid, `message` is a single line such as
 * `/text: must be string`, fit to put into a tool result with `isError: true`.
 */
export type ValidationResult =
  | { valid: true }
  | { valid: false; message: string; errors: readonly ValidationIssue[] }

/**
 * A compiled schema: value in, verdict out. Any JSON value gets a verdict, even one nested too deep
 * to walk; only a non-JSON value whose getters or proxy traps throw makes it throw.
 */
export type Validator = (value: unknown) => ValidationResult

/**
 * A JSON Schema validator as rxmcp uses it: what a server checks tool arguments, tool results and
 * elicitation answers with, and what a client checks servers' tool results with. rxmcp ships two,
 * `compiledJsonSchema` (ajv, from `rxmcp/json-schema`) and `interpretedJsonSchema`
 * (@cfworker/json-schema, from `rxmcp/json-schema/interpreted`); any object of this shape can be
 * given as the `jsonSchemaValidator` option instead.
 *
 * rxmcp calls `compileSchema` once per schema object (when a tool is registered or first called,
 * when a client lists tools) and the validator it returns once per value, so the validator is the
 * per-call cost and compiling may be slow.
 * @example
 * const strict: JsonSchemaCompiler = {
 *   compileSchema: schema => value => mySchemaLibrary.check(schema, value) ? { valid: true } : { valid: false, message: 'invalid', errors: [] },
 *   isSecureSchema: () => true,
 * }
 * createServer(info, { jsonSchemaValidator: strict })
 */
export interface JsonSchemaCompiler {
  /**
   * Compiles a schema once (cached per object, so compiling the same object again is cheap);
   * throws a TypeError for a schema it refuses (an invalid schema, an unsupported `$schema`, a
   * `$ref` it cannot resolve), which fails the tool's registration or call.
   */
  compileSchema(schema: object): Validator
  /**
   * True when a schema from an untrusted source (a server's outputSchema, seen by a client) is safe
   * to compile and run: nothing in it can make validation slow on purpose. A client only checks
   * results against outputSchemas that pass.
   */
  isSecureSchema(schema: object): boolean
}

/**
 * Which JSON Schema validator a server or client uses (the `jsonSchemaValidator` option of
 * `createServer` and `connect`), chosen once, when the server or client is made:
 *
 * - `'auto'` (the default): the compiled validator where the runtime allows code generation, the
 *   interpreted one where it refuses it (Cloudflare Workers, `node
 *   --disallow-code-generation-from-strings`, a Content-Security-Policy without 'unsafe-eval').
 *   The runtime is probed once per process, on first need, by compiling `return 1` with `new
 *   Function` (under a CSP that refuses it, the browser reports that one violation).
 * - `'compiled'`: ajv, which compiles each schema to a function (fast per value, slower to compile).
 * - `'interpreted'`: `@cfworker/json-schema`, an optional peer dependency to install, which walks
 *   the schema for each value. The same verdicts; a few µs per value instead of a few hundred ns.
 * - a {@link JsonSchemaCompiler} of your own (or one of the two by name, `compiledJsonSchema` from
 *   `rxmcp/json-schema`, `interpretedJsonSchema` from `rxmcp/json-schema/interpreted`).
 *
 * With a string choice the validator's module loads only when a schema first needs it.
 */
export type JsonSchemaValidatorOption = 'auto' | 'compiled' | 'interpreted' | JsonSchemaCompiler

/**
 * The `$schema` ids rxmcp accepts, keyed without scheme and trailing `#`: the dialect to compile
 * with and the id ajv knows its meta-schema by. Draft-06 runs on the draft-07 instance, which ajv
 * supports once the draft-06 meta-schema is added.
 */
export const DIALECTS: Readonly<Record<string, { dialect: Dialect; metaSchema: string }>> = {
  'json-schema.org/draft/2020-12/schema': { dialect: '2020-12', metaSchema: 'https://json-schema.org/draft/2020-12/schema' },
  'json-schema.org/draft/2019-09/schema': { dialect: '2019-09', metaSchema: 'https://json-schema.org/draft/2019-09/schema' },
  'json-schema.org/draft-07/schema': { dialect: 'draft-07', metaSchema: 'http://json-schema.org/draft-07/schema' },
  'json-schema.org/draft-06/schema': { dialect: 'draft-07', metaSchema: 'http://json-schema.org/draft-06/schema' },
}

/** A JSON Schema dialect the compiler has an instance for. */
export type Dialect = '2020-12' | '2019-09' | 'draft-07'

/**
 * The dialect a schema declares with `$schema` (2020-12 when it declares none).
 * @throws TypeError when `$schema` is not a string or names a dialect rxmcp does not support: MCP
 *   2025-11-25 lets a schema name its dialect, and one we cannot honour must fail loudly rather
 *   than be validated by the wrong rules.
 */
export function dialectOf(schema: object): { dialect: Dialect; metaSchema?: string } {
  const declared = (schema as { $schema?: unknown }).$schema
  if (declared === undefined) return { dialect: '2020-12' }
  if (typeof declared !== 'string') throw new TypeError('Invalid JSON Schema: $schema must be a string')
  const known = DIALECTS[declared.replace(/^https?:\/\//, '').replace(/#$/, '')]
  if (known === undefined) {
    throw new TypeError(`Unsupported JSON Schema dialect ${JSON.stringify(declared)}: use 2020-12, 2019-09, draft-07 or draft-06`)
  }
  return known
}

/**
 * The checks a schema passes before anything is compiled: an object (not an array) with a
 * supported `$schema`, if it names one. Throws a TypeError otherwise.
 */
export function checkSchemaShape(schema: unknown): void {
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) throw new TypeError('A JSON Schema must be an object')
  dialectOf(schema)
}

/** True when the schema's root says `type: 'object'`, as MCP requires of a tool's `inputSchema`. */
export function isObjectSchema(schema: unknown): boolean {
  return typeof schema === 'object' && schema !== null && (schema as { type?: unknown }).type === 'object'
}

/**
 * The answer to an elicitation form with the schema's `default`s filled in for the fields the user
 * left out (absent or `undefined`); what the user gave is kept as is, including fields the schema
 * does not name.
 *
 * Returns a new object and never mutates `schema` or `content`; object and array defaults are
 * copied, so editing the answer cannot edit the schema. The keys `__proto__`, `constructor` and
 * `prototype` are dropped from both sides, so an answer cannot reach a prototype.
 *
 * @throws TypeError when `content` is not an object, `undefined` or `null` (an array, a string).
 * @example
 * applyDefaults({ type: 'object', properties: { n: { type: 'number', default: 3 } } }, {}) // { n: 3 }
 */
export function applyDefaults(schema: object, content: Record<string, unknown> | undefined): Record<string, unknown> {
  if (content !== undefined && content !== null && (typeof content !== 'object' || Array.isArray(content))) {
    throw new TypeError('Elicitation content must be an object')
  }
  const out: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(content ?? {})) {
    if (!FORBIDDEN_KEYS.has(key)) out[key] = value
  }
  const properties = (schema as { properties?: unknown }).properties
  if (typeof properties !== 'object' || properties === null) return out
  for (const [key, property] of Object.entries(properties)) {
    // hasOwn, so a field named `toString` is not taken as answered by Object.prototype.
    if (FORBIDDEN_KEYS.has(key) || (Object.hasOwn(out, key) && out[key] !== undefined)) continue
    if (typeof property === 'object' && property !== null && Object.hasOwn(property, 'default')) {
      const value: unknown = (property as { default: unknown }).default
      out[key] = typeof value === 'object' && value !== null ? structuredClone(value) : value
    }
  }
  return out
}

/** Keys that would write to a prototype when assigned on a plain object. */
const FORBIDDEN_KEYS = new Set(['__proto__', 'constructor', 'prototype'])
