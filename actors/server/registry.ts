/**
 * The server's registries as its parts see them: one entry per tool, resource, template and
 * prompt (the definition, the handler, the wire form, the compiled validators), and the helpers
 * that fill them. A leaf: the server fills the entries, the router reads them.
 */
import type { JsonSchemaCompiler, Validator } from '../../lib/validator.ts'
import type { UriTemplate } from '../../lib/uri-template.ts'
import type { HeaderParam } from '../../lib/schema/modern.ts'
import type { Prompt, Resource, ResourceTemplate, Tool } from '../../lib/schema/types.ts'
import type { Mountable } from './mountable.ts'
import type {
  ObjectStandardSchema, PromptDefinition, PromptHandler, ResourceDefinition, ResourceHandler, ResourceTemplateDefinition,
  TemplateHandler, ToolDefinition, ToolHandler,
} from './api.ts'

export interface ToolEntry {
  name: string
  definition: ToolDefinition
  handler: ToolHandler<any>
  validateInput: Validator | undefined
  /** The JSON Schema of the arguments, compiled into `validateInput` on the first call. */
  jsonInput: object | undefined
  /** The JSON Schema of `structuredContent`, compiled into `validateOutput` on the first call. */
  jsonOutput: object | undefined
  /** The Standard Schema of the arguments, when `inputSchema` is one (then `validateInput` is unset). */
  standardInput: ObjectStandardSchema | undefined
  /** The Standard Schema of `structuredContent`, when `outputSchema` is one (then `validateOutput` is unset). */
  standardOutput: ObjectStandardSchema | undefined
  validateOutput: Validator | undefined
  /** The arguments mirrored into `Mcp-Param-*` headers (modern HTTP), read on the first call that needs them. */
  headerParams?: HeaderParam[]
  /** The wire form, rebuilt when the definition changes. */
  wire: Tool
  isEnabled: boolean
  /** Set for an entry of a mounted source: its requests are forwarded there, unvalidated. */
  mount?: MountedRef
}

/**
 * Where a mounted entry came from: the source its requests are forwarded to, and its name (or URI)
 * there. The router forwards with the original name, and checks nothing the source will check.
 */
export interface MountedRef {
  readonly source: Mountable
  readonly original: string
  /** The source answers completion/complete. */
  readonly completions: boolean
}

export interface ResourceEntry { uri: string; definition: ResourceDefinition; handler: ResourceHandler; wire: Resource; isEnabled: boolean; mount?: MountedRef }
export interface TemplateEntry { template: UriTemplate; definition: ResourceTemplateDefinition; handler: TemplateHandler; wire: ResourceTemplate; isEnabled: boolean; mount?: MountedRef }
export interface PromptEntry {
  name: string; definition: PromptDefinition; handler: PromptHandler<any>; wire: Prompt; isEnabled: boolean
  /** The Standard Schema of the arguments, when the definition has one. */
  standardArguments: ObjectStandardSchema | undefined
  mount?: MountedRef
}

export type ListKind = 'tools' | 'resources' | 'prompts'

/** The four registries as the parts that only read them see them (the server holds them). */
export interface RegistriesView {
  readonly tools: ReadonlyMap<string, ToolEntry>
  readonly resources: ReadonlyMap<string, ResourceEntry>
  readonly templates: ReadonlyMap<string, TemplateEntry>
  readonly prompts: ReadonlyMap<string, PromptEntry>
}

/**
 * Compiles a tool's JSON Schemas. A schema the compiler refuses becomes `Failure` naming the tool:
 * a TypeError at registration, an InternalError (-32603) on a call.
 */
export function compileToolSchemas(entry: ToolEntry, compiler: JsonSchemaCompiler, Failure: new (message: string) => Error): void {
  const compile = (schema: object, key: string): Validator => {
    try {
      return compiler.compileSchema(schema)
    } catch (error) {
      throw new Failure(`Tool ${JSON.stringify(entry.name)}: ${key}: ${error instanceof Error ? error.message : String(error)}`)
    }
  }
  if (entry.jsonInput !== undefined) entry.validateInput = compile(entry.jsonInput, 'inputSchema')
  if (entry.jsonOutput !== undefined) entry.validateOutput = compile(entry.jsonOutput, 'outputSchema')
}

/** Drops keys whose value is undefined, so the wire form carries no `"x": null` noise. */
export function compact<T extends object>(value: T): T {
  const out: Record<string, unknown> = {}
  for (const [key, item] of Object.entries(value)) if (item !== undefined) out[key] = item
  return out as T
}
