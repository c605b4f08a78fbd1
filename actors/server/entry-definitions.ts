/**
 * How a registration's definition becomes its registry entry: the wire form a listing shows, the
 * schemas its calls are checked with (a Standard Schema's JSON Schema, a JSON Schema's validator),
 * and the TypeErrors that refuse a definition at registration (and at `update`), naming it.
 */
import type { JsonObject } from '../../lib/jsonrpc/message.ts'
import { isJsonObject } from '../../lib/jsonrpc/guards.ts'
import { checkSchemaShape, type JsonSchemaSource } from '../../lib/validator.ts'
import { isStandardSchema, standardJsonSchema, type StandardSchemaV1 } from '../../lib/standard-schema.ts'
import type { Prompt, PromptArgument, Tool } from '../../lib/schema/types.ts'
import type { PromptDefinition, ToolDefinition } from './api.ts'
import { compact, compileToolSchemas, type PromptEntry, type ToolEntry } from './registry.ts'

const ANY_OBJECT_SCHEMA = Object.freeze({ type: 'object' as const })

/**
 * Fills `entry` (a tool named `entry.name`) from `next`: its wire form, its schemas, its
 * validators (compiled now when the validator is loaded, else on the tool's first call). Throws a
 * TypeError naming the tool for a schema it cannot send or check (not an object's, or with no
 * JSON Schema to send for it).
 */
export function applyToolDefinition(entry: ToolEntry, next: ToolDefinition, jsonSchema: JsonSchemaSource): void {
  const name = entry.name
  const label = `Tool ${JSON.stringify(name)}`
  const standard = isStandardSchema(next.inputSchema) ? next.inputSchema : undefined
  if (standard === undefined && next.inputJsonSchema !== undefined) throw new TypeError(`${label}: inputJsonSchema goes with a Standard Schema inputSchema`)
  const inputSchema = standard !== undefined ? wireSchemaOf(standard, next.inputJsonSchema, label, 'inputSchema', 'input') : next.inputSchema ?? ANY_OBJECT_SCHEMA
  if (!isJsonObject(inputSchema) || inputSchema.type !== 'object') throw new TypeError(`${label}: inputSchema must have type "object"`)
  const standardOutput = isStandardSchema(next.outputSchema) ? next.outputSchema : undefined
  if (standardOutput === undefined && next.outputJsonSchema !== undefined) throw new TypeError(`${label}: outputJsonSchema goes with a Standard Schema outputSchema`)
  const outputSchema = standardOutput !== undefined ? wireSchemaOf(standardOutput, next.outputJsonSchema, label, 'outputSchema', 'output') : next.outputSchema
  if (standardOutput !== undefined && (outputSchema as JsonObject).type !== 'object') throw new TypeError(`${label}: outputSchema must have type "object"`)
  entry.definition = next
  entry.standardInput = standard
  entry.standardOutput = standardOutput
  entry.jsonInput = next.inputSchema === undefined || standard !== undefined ? undefined : inputSchema
  entry.jsonOutput = next.outputSchema === undefined || standardOutput !== undefined ? undefined : next.outputSchema as object
  if (entry.jsonOutput !== undefined) checkSchemaShape(entry.jsonOutput)
  if (entry.jsonInput !== undefined) checkSchemaShape(entry.jsonInput)
  entry.validateInput = entry.validateOutput = undefined
  entry.headerParams = undefined
  // JSON Schemas compile on the tool's first call, when the validator loads: importing rxmcp
  // and answering initialize never pay for it. Once it is loaded, they compile here.
  const compiler = jsonSchema.loaded()
  if (compiler !== undefined) compileToolSchemas(entry, compiler, TypeError)
  entry.wire = compact({
    name, title: next.title, description: next.description, inputSchema, outputSchema,
    annotations: next.annotations, icons: next.icons, execution: next.execution, _meta: next._meta,
  }) as Tool
}

/**
 * Fills `entry` (a prompt named `entry.name`) from `next`: its wire form, with the arguments given
 * by hand or read off its Standard Schema. Throws a TypeError naming the prompt for a schema that
 * is not a Standard Schema of an object, or cannot be converted.
 */
export function applyPromptDefinition(entry: PromptEntry, next: PromptDefinition): void {
  const name = entry.name
  const { complete: _complete, argumentsSchema: schema, argumentsJsonSchema: jsonSchema, ...described } = next
  const label = `Prompt ${JSON.stringify(name)}`
  if (schema !== undefined && !isStandardSchema(schema)) throw new TypeError(`${label}: argumentsSchema must be a Standard Schema (zod 4, valibot, arktype)`)
  if (schema === undefined && jsonSchema !== undefined) throw new TypeError(`${label}: argumentsJsonSchema goes with argumentsSchema`)
  // Arguments given by hand win; otherwise they are read off the schema's JSON Schema.
  const listed = schema === undefined || described.arguments !== undefined ? described.arguments
    : promptArgumentsOf(wireSchemaOf(schema, jsonSchema, label, 'argumentsSchema', 'input'), label)
  entry.definition = next
  entry.standardArguments = schema
  entry.wire = compact({ name, ...described, arguments: listed }) as Prompt
}

/**
 * The JSON Schema to send for a Standard Schema: the one the user gave, else the schema's own
 * conversion. Throws a TypeError naming the tool or prompt when there is neither.
 */
function wireSchemaOf(schema: StandardSchemaV1, given: JsonObject | undefined, label: string, key: string, direction: 'input' | 'output'): JsonObject {
  if (given !== undefined) return given
  let converted: JsonObject | undefined
  try {
    converted = standardJsonSchema(schema, direction)
  } catch (error) {
    throw new TypeError(`${label}: the ${schema['~standard'].vendor} schema of ${key} cannot be converted to JSON Schema (${error instanceof Error ? error.message : String(error)}); pass its JSON Schema as ${key.replace('Schema', 'JsonSchema')}`, { cause: error })
  }
  if (converted === undefined) {
    throw new TypeError(`${label}: the ${schema['~standard'].vendor} schema of ${key} has no JSON Schema converter; pass its JSON Schema as ${key.replace('Schema', 'JsonSchema')}`)
  }
  return converted
}

/** A prompt's arguments, read off the JSON Schema of an object: each property, its description, whether required. */
function promptArgumentsOf(schema: JsonObject, label: string): PromptArgument[] {
  if (schema.type !== 'object' || (schema.properties !== undefined && !isJsonObject(schema.properties))) {
    throw new TypeError(`${label}: argumentsSchema must describe an object`)
  }
  const required = Array.isArray(schema.required) ? schema.required : []
  return Object.entries(schema.properties ?? {}).map(([name, property]) => {
    const described = isJsonObject(property) ? property : {}
    return compact({
      name,
      title: typeof described.title === 'string' ? described.title : undefined,
      description: typeof described.description === 'string' ? described.description : undefined,
      required: required.includes(name),
    })
  })
}
