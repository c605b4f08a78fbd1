import { InvalidParamsError } from '../../lib/jsonrpc/errors.ts'
import { isJsonObject } from '../../lib/jsonrpc/guards.ts'
import { loadJsonSchema, type Validator } from '../../lib/validator.ts'
import type { CallToolResult, Tool } from '../../lib/schema/types.ts'
import { ToolNameWarning, toolNameIssues } from '../../lib/tool-names.ts'
import { InvalidToolError } from './errors.ts'
import { ToolHeaders } from './tool-headers.ts'

/** Most distinct tool names warned about (SEP-986) per client: a server cannot make the warnings grow without bound. */
const MAX_WARNED_NAMES = 1000

/**
 * What the client knows of the tools it listed: a validator for each outputSchema (its results are
 * checked against it) and their x-mcp-header parameters (mirrored into `Mcp-Param-*` headers).
 */
export class ToolCatalog {
  /** x-mcp-header parameters by tool. */
  readonly headers = new ToolHeaders()
  /** outputSchema validators of listed tools, by tool name. */
  readonly #outputValidators = new Map<string, Validator>()
  /** Names already warned about (ToolNameWarning), so a list read again does not warn again. */
  readonly #warned = new Set<string>()

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
   * The JSON Schema compiler loads here, the first time a listed tool has an outputSchema, so a
   * client that never meets one never loads it.
   */
  async remember(listed: Tool[], exclude: boolean, report: (error: InvalidToolError | ToolNameWarning) => void): Promise<Tool[]> {
    if (!Array.isArray(listed)) return listed
    const named = this.#named(listed, report)
    const { kept, rejected } = this.headers.remember(named)
    const tools = exclude && rejected.length > 0 ? kept : named
    if (exclude) for (const error of rejected) report(error)
    if (!tools.some(tool => tool.outputSchema !== undefined)) {
      for (const tool of tools) this.#outputValidators.delete(tool.name)
      return tools
    }
    const { compileSchema, isSecureSchema } = await loadJsonSchema()
    for (const tool of tools) {
      // A server's schema is untrusted: one that could make validation slow on purpose is not run.
      if (tool.outputSchema === undefined || !isSecureSchema(tool.outputSchema)) { this.#outputValidators.delete(tool.name); continue }
      try { this.#outputValidators.set(tool.name, compileSchema(tool.outputSchema)) } catch { this.#outputValidators.delete(tool.name) }
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
