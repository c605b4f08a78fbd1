/**
 * The light side of JSON Schema: verdict types, form defaults, and validators that load the
 * compiler (ajv, in ./json-schema.ts) on first use. A stdio server answers `initialize` and
 * `tools/list` without ever loading ajv; it loads when a tool with a schema is first called.
 */

import type { ValidationResult, Validator } from './schema-rules.ts'
export { DIALECTS, applyDefaults, checkSchemaShape, dialectOf, isObjectSchema, type Dialect, type ValidationIssue, type ValidationResult, type Validator } from './schema-rules.ts'

/**
 * A validator that may need the compiler first: the first call (before the compiler is loaded)
 * returns a Promise of the verdict, later calls return it synchronously. A schema the compiler
 * refuses makes the call throw (or the Promise reject) with a TypeError saying why.
 */
export type LazyValidator = (value: unknown) => ValidationResult | Promise<ValidationResult>

/** What ./json-schema.ts offers once loaded. */
export interface JsonSchemaCompiler {
  /** Compiles a schema once (cached per object); throws a TypeError for a schema it refuses. */
  compileSchema(schema: object): Validator
  /** True when a schema from an untrusted source is safe to compile and run (no ReDoS and the like). */
  isSecureSchema(schema: object): boolean
}

/** The compiler once loaded; undefined until then. */
let compiler: JsonSchemaCompiler | undefined
/** The one load in progress, shared by every caller. */
let loading: Promise<JsonSchemaCompiler> | undefined

/**
 * Loads the JSON Schema compiler (ajv and its dialects). Resolves at once after the first load.
 * @example
 * const { compileSchema } = await loadJsonSchema()
 * compileSchema({ type: 'string' })('x') // { valid: true }
 */
export function loadJsonSchema(): Promise<JsonSchemaCompiler> {
  if (compiler !== undefined) return Promise.resolve(compiler)
  loading ??= import('./json-schema.ts').then(module => (compiler = module))
  return loading
}

/** The compiler if it is already loaded, else undefined (and nothing is loaded). */
export function loadedJsonSchema(): JsonSchemaCompiler | undefined {
  return compiler
}

/**
 * A validator for `schema` that compiles it on its first call, loading the compiler then if
 * nothing loaded it before. The shape checks that need no compiler (`checkSchemaShape`) are the
 * caller's to run up front; everything else a bad schema can be wrong about surfaces on the first
 * call as a TypeError.
 * @see loadJsonSchema
 */
export function lazyValidator(schema: object): LazyValidator {
  // The compiled validator, once the first call compiled it.
  let compiled: Validator | undefined
  return value => {
    if (compiled !== undefined) return compiled(value)
    const ready = compiler
    if (ready !== undefined) {
      compiled = ready.compileSchema(schema)
      return compiled(value)
    }
    return loadJsonSchema().then(loaded => {
      compiled ??= loaded.compileSchema(schema)
      return compiled(value)
    })
  }
}

