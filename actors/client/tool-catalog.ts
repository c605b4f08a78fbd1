import { InvalidParamsError } from '../../lib/jsonrpc/errors.ts'
import { isJsonObject } from '../../lib/jsonrpc/guards.ts'
import type { JsonSchemaSource, Validator } from '../../lib/validator.ts'
import type { CallToolResult, Tool } from '../../lib/schema/types.ts'
import { ToolNameWarning, toolNameIssues } from '../../lib/tool-names.ts'
import { InvalidToolError } from './errors.ts'
import { ToolHeaders } from './tool-headers.ts'

/** Most distinct tool names warned about (SEP-986) per client: a server cannot make the warnings grow without bound. */
const MAX_WARNED_NAMES = 1000

/** A listed tool's `execution.taskSupport` (MCP 2025-11-25), absent read as the default, "forbidden". */
export type TaskSupport = 'forbidden' | 'optional' | 'required'

/**
 * What the client knows of the tools it listed: a validator for each outputSchema (its results are
 * checked against it), their x-mcp-header parameters (mirrored into `Mcp-Param-*` headers), and
 * how each may run as a task (`execution.taskSupport`).
 */
export class ToolCatalog {
  /** x-mcp-header parameters by tool. */
  readonly headers = new ToolHeaders()
  /** outputSchema validators of listed tools, by tool name. */
  readonly #outputValidators = new Map<string, Validator>()
  /**
   * `execution.taskSupport` of the tools listed since the last {@link forgetTaskSupport}, by name.
   * Bounded by what the server lists: an entry per distinct name it listed (one page at a time).
   */
  readonly #taskSupport = new Map<string, TaskSupport>()
  /** Names already warned about (ToolNameWarning), so a list read again does not warn again. */
  readonly #warned = new Set<string>()

  /** @param jsonSchema the client's JSON Schema validator (ClientOptions.jsonSchemaValidator), for outputSchemas. */
  constructor(readonly jsonSchema: JsonSchemaSource) {}

  /**
   * Takes in a page of listed tools. Resolves with the tools to show:
   *
   * - an entry that is not an object with a non-empty string `name` cannot be called, and a second
   *   tool of a name already in the page could not be told apart (MCP tool names are unique within
   *   a server): both are left out, each handed to `report` as an InvalidToolError;
   * - a name outside the MCP tool-name rules (SEP-986, all SHOULDs: see `toolNameIssues`) is kept,
   *   and handed to `report` once as a ToolNameWarning;
   * - with `exclude` (the modern era over a transport that mirrors headers, HTTP), tools whose
   *   x-mcp-header annotations are invalid are left out (MCP 2026-07-28 Streamable HTTP: the
   *   client MUST exclude them) and each is handed to `report`.
   *
   * The JSON Schema validator loads here, the first time a listed tool has an outputSchema, so a
   * client that never meets one never loads it.
   */
  async remember(listed: Tool[], exclude: boolean, report: (error: InvalidToolError | ToolNameWarning) => void): Promise<Tool[]> {
    if (!Array.isArray(listed)) return listed
    const named = this.#named(listed, report)
    for (const tool of named) {
      const support = taskSupportOf(tool)
      if (support === undefined) this.#taskSupport.delete(tool.name)
      else this.#taskSupport.set(tool.name, support)
    }
    const { kept, rejected } = this.headers.remember(named)
    const tools = exclude && rejected.length > 0 ? kept : named
    if (exclude) for (const error of rejected) report(error)
    if (!tools.some(tool => tool.outputSchema !== undefined)) {
      for (const tool of tools) this.#outputValidators.delete(tool.name)
      return tools
    }
    // Called as methods: a compiler of the user's own may be a class instance.
    const compiler = this.jsonSchema.loaded() ?? await this.jsonSchema.load()
    for (const tool of tools) {
      // A server's schema is untrusted: one that could make validation slow on purpose is not run.
      if (tool.outputSchema === undefined || !compiler.isSecureSchema(tool.outputSchema)) { this.#outputValidators.delete(tool.name); continue }
      try { this.#outputValidators.set(tool.name, compiler.compileSchema(tool.outputSchema)) } catch { this.#outputValidators.delete(tool.name) }
    }
    return tools
  }

  /** The entries of `listed` that name a tool, each name once (see `remember`); the array itself when all do. */
  #named(listed: Tool[], report: (error: InvalidToolError | ToolNameWarning) => void): Tool[] {
    const names = new Set<string>()
    let kept: Tool[] | undefined
    for (let index = 0; index < listed.length; index++) {
      const tool: unknown = listed[index]
      const name = isJsonObject(tool) && typeof tool.name === 'string' ? tool.name : undefined
      let reason: string | undefined
      if (name === undefined || name === '') reason = 'it has no name (a non-empty string)'
      else if (names.has(name)) reason = 'another tool of the same name is listed before it (tool names are unique within a server)'
      if (reason !== undefined) {
        report(new InvalidToolError(name ?? '', reason))
        kept ??= listed.slice(0, index)
        continue
      }
      names.add(name!)
      kept?.push(tool as Tool)
      if (this.#warned.has(name!) || this.#warned.size >= MAX_WARNED_NAMES) continue
      const issues = toolNameIssues(name!)
      if (issues.length === 0) continue
      this.#warned.add(name!)
      report(new ToolNameWarning(name!, issues))
    }
    return kept ?? listed
  }

  /**
   * How the tool `name` may run as a task, as its last listing said; undefined for a tool not
   * listed since the last {@link forgetTaskSupport} (the client then lets the server decide).
   */
  taskSupport(name: string): TaskSupport | undefined {
    return this.#taskSupport.get(name)
  }

  /**
   * Forgets what the listings said of task support: the server's tools may have changed (it sent
   * `notifications/tools/list_changed`, or the client reconnected), and a refusal must never rest
   * on a definition the server no longer has.
   */
  forgetTaskSupport(): void {
    this.#taskSupport.clear()
  }

  /** The result of a call to `name`, checked against the tool's outputSchema when it was listed with one; throws InvalidParamsError otherwise. */
  checkResult(name: string, result: CallToolResult): CallToolResult {
    const validate = this.#outputValidators.get(name)
    if (validate === undefined || result.isError === true) return result
    if (result.structuredContent === undefined) throw new InvalidParamsError(`Tool ${name} has an outputSchema but returned no structuredContent`)
    const check = validate(result.structuredContent)
    if (!check.valid) throw new InvalidParamsError(`Tool ${name} returned structuredContent that does not match its outputSchema: ${check.message}`)
    return result
  }
}

/**
 * A tool's `execution.taskSupport`: absent is the default, "forbidden" (MCP 2025-11-25 tools); a
 * value the revision does not define is undefined (not known: the server decides).
 */
function taskSupportOf(tool: Tool): TaskSupport | undefined {
  const execution: unknown = tool.execution
  if (execution === undefined) return 'forbidden'
  if (!isJsonObject(execution)) return undefined
  const value = execution.taskSupport
  if (value === undefined) return 'forbidden'
  return value === 'forbidden' || value === 'optional' || value === 'required' ? value : undefined
}
