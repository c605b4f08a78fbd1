/**
 * The light side of JSON Schema: verdict types, form defaults, the choice of validator, and
 * validators that load it on first use. Two validators ship: compiled (ajv, ./json-schema.ts),
 * which generates code, and interpreted (@cfworker/json-schema, ./json-schema-interpreted.ts),
 * which works where code generation is refused. Each loads by dynamic import when first needed: a
 * stdio server answers `initialize` and `tools/list` without loading either; one loads when a tool
 * with a schema is first called.
 */

import type { JsonSchemaCompiler, JsonSchemaValidatorOption, ValidationResult, Validator } from './schema-rules.ts'
export {
  DIALECTS, applyDefaults, checkSchemaShape, dialectOf, isObjectSchema,
  type Dialect, type JsonSchemaCompiler, type JsonSchemaValidatorOption, type ValidationIssue, type ValidationResult, type Validator,
} from './schema-rules.ts'

/**
 * A validator that may need the compiler first: the first call (before the compiler is loaded)
 * returns a Promise of the verdict, later calls return it synchronously. A schema the compiler
 * refuses makes the call throw (or the Promise reject) with a TypeError saying why.
 */
export type LazyValidator = (value: unknown) => ValidationResult | Promise<ValidationResult>

/**
 * Where one server or client gets its JSON Schema compiler: fixed when it is made (see
 * {@link jsonSchemaSource}), so choosing costs nothing per call.
 */
export interface JsonSchemaSource {
  /** The compiler if it is loaded, else undefined (and nothing is loaded). */
  loaded(): JsonSchemaCompiler | undefined
  /** Loads the compiler once, shared by every caller; resolves at once after that. */
  load(): Promise<JsonSchemaCompiler>
}

/**
 * The source of the compiler `option` chooses (see {@link JsonSchemaValidatorOption}; default
 * `'auto'`). The string choices share one load per process; `'auto'` decides between them on its
 * first use, and for good.
 * @throws TypeError for an option that is none of the choices.
 */
export function jsonSchemaSource(option: JsonSchemaValidatorOption = 'auto'): JsonSchemaSource {
  if (option === 'auto') return AUTO
  if (option === 'compiled') return COMPILED
  if (option === 'interpreted') return INTERPRETED
  if (typeof option === 'object' && option !== null && typeof option.compileSchema === 'function' && typeof option.isSecureSchema === 'function') {
    const loaded = Promise.resolve(option)
    return { loaded: () => option, load: () => loaded }
  }
  throw new TypeError(`jsonSchemaValidator must be 'auto', 'compiled', 'interpreted' or an object with compileSchema and isSecureSchema, not ${String(option)}`)
}

/**
 * True when this runtime lets code compile from strings (`new Function`), which the compiled
 * validator needs. Probed once per process; the answer is kept.
 */
export function canGenerateCode(): boolean {
  if (codeGeneration === undefined) {
    try {
      codeGeneration = new Function('return 1')() === 1
    } catch {
      // EvalError under --disallow-code-generation-from-strings, in Workers, and under a CSP.
      codeGeneration = false
    }
  }
  return codeGeneration
}

/** The answer of {@link canGenerateCode}, once probed. */
let codeGeneration: boolean | undefined

/**
 * Loads the JSON Schema compiler of the default choice (`'auto'`). Resolves at once after the
 * first load.
 * @example
 * const { compileSchema } = await loadJsonSchema()
 * compileSchema({ type: 'string' })('x') // { valid: true }
 */
export function loadJsonSchema(): Promise<JsonSchemaCompiler> {
  return AUTO.load()
}

/** The compiler of the default choice (`'auto'`) if it is already loaded, else undefined (and nothing is loaded). */
export function loadedJsonSchema(): JsonSchemaCompiler | undefined {
  return AUTO.loaded()
}

/**
 * A validator for `schema` that compiles it on its first call, loading the compiler of `source`
 * (default: the `'auto'` choice) then if nothing loaded it before. The shape checks that need no
 * compiler (`checkSchemaShape`) are the caller's to run up front; everything else a bad schema can
 * be wrong about surfaces on the first call as a TypeError.
 * @see loadJsonSchema
 */
export function lazyValidator(schema: object, source: JsonSchemaSource = AUTO): LazyValidator {
  // The compiled validator, once the first call compiled it.
  let compiled: Validator | undefined
  return value => {
    if (compiled !== undefined) return compiled(value)
    const ready = source.loaded()
    if (ready !== undefined) {
      compiled = ready.compileSchema(schema)
      return compiled(value)
    }
    return source.load().then(loaded => {
      compiled ??= loaded.compileSchema(schema)
      return compiled(value)
    })
  }
}

/**
 * A source that loads a module by dynamic import on first need. The import is a literal in each
 * caller so that bundlers see it (and can split it off, or leave out the one a build never uses).
 */
function moduleSource(importModule: () => Promise<JsonSchemaCompiler>): JsonSchemaSource {
  /** The compiler once loaded; undefined until then. */
  let compiler: JsonSchemaCompiler | undefined
  /** The one load in progress, shared by every caller; cleared if it fails, so a later call tries again. */
  let loading: Promise<JsonSchemaCompiler> | undefined
  return {
    loaded: () => compiler,
    load: () => {
      if (compiler !== undefined) return Promise.resolve(compiler)
      loading ??= importModule().then(
        loadedCompiler => (compiler = loadedCompiler),
        (error: unknown) => {
          loading = undefined
          throw error
        },
      )
      return loading
    },
  }
}

const COMPILED = moduleSource(() => import('./json-schema.ts').then(module => module.compiledJsonSchema))

const INTERPRETED = moduleSource(() => import('./json-schema-interpreted.ts').then(
  module => module.interpretedJsonSchema,
  (error: unknown) => {
    throw new Error("The interpreted JSON Schema validator needs @cfworker/json-schema, an optional peer dependency of rxmcp: npm install @cfworker/json-schema", { cause: error })
  },
))

/** The default choice: the compiled validator where code generation is allowed, else the interpreted one. */
const AUTO: JsonSchemaSource = {
  loaded: () => (canGenerateCode() ? COMPILED : INTERPRETED).loaded(),
  load: () => (canGenerateCode() ? COMPILED : INTERPRETED).load(),
}
