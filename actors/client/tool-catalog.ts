import { InvalidParamsError } from '../../lib/jsonrpc/errors.ts'
import { loadJsonSchema, type Validator } from '../../lib/validator.ts'
import type { CallToolResult, Tool } from '../../lib/schema/types.ts'
import type { InvalidToolError } from './errors.ts'
import { ToolHeaders } from './tool-headers.ts'

/**
 * What the client knows of the tools it listed: a validator for each outputSchema (its results are
 * checked against it) and their x-mcp-header parameters (mirrored into `Mcp-Param-*` headers).
 */
export class ToolCatalog {
  /** x-mcp-header parameters by tool. */
  readonly headers = new ToolHeaders()
  /** outputSchema validators of listed tools, by tool name. */
  readonly #outputValidators = new Map<string, Validator>()

  /**
   * Takes in a page of listed tools. Resolves with the tools to show: with `exclude` (the modern
   * era over a transport that mirrors headers, HTTP), those whose x-mcp-header annotations are
   * invalid are left out (MCP 2026-07-28 Streamable HTTP: the client MUST exclude them) and each is
   * handed to `report`. The JSON Schema compiler loads here, the first time a listed tool has an
   * outputSchema, so a client that never meets one never loads it.
   */
  async remember(listed: Tool[], exclude: boolean, report: (error: InvalidToolError) => void): Promise<Tool[]> {
    if (!Array.isArray(listed)) return listed
    const { kept, rejected } = this.headers.remember(listed)
    const tools = exclude && rejected.length > 0 ? kept : listed
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
