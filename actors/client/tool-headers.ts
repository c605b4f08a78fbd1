import type { JsonObject } from '../../lib/jsonrpc/message.ts'
import { isJsonObject } from '../../lib/jsonrpc/guards.ts'
import { encodeHeaderValue, headerArgumentOf, headerNameOf, headerParamsOf, type HeaderParam } from '../../lib/schema/modern.ts'
import type { Tool } from '../../lib/schema/types.ts'
import { InvalidToolError } from './errors.ts'

/**
 * What the client knows of each listed tool's `x-mcp-header` parameters (MCP 2026-07-28
 * Streamable HTTP, custom headers from tool parameters), to mirror them into `Mcp-Param-{Name}`
 * headers of its tools/call requests.
 */
export class ToolHeaders {
  /** Header parameters by tool name, from the tool lists seen so far (a tool without any has none). */
  readonly #params = new Map<string, HeaderParam[]>()

  /**
   * Reads the header parameters of listed tools. Returns the tools to keep and the errors of those
   * whose annotations are invalid, which a client on Streamable HTTP MUST leave out of the list
   * (and of later calls: a tool rejected here sends no headers).
   */
  remember(tools: readonly Tool[]): { kept: Tool[]; rejected: InvalidToolError[] } {
    const kept: Tool[] = []
    const rejected: InvalidToolError[] = []
    for (const tool of tools) {
      if (!isJsonObject(tool) || typeof tool.name !== 'string') continue
      const read = headerParamsOf(tool.inputSchema)
      if (read.valid) {
        if (read.params.length > 0) this.#params.set(tool.name, read.params)
        else this.#params.delete(tool.name)
        kept.push(tool)
      } else {
        this.#params.delete(tool.name)
        rejected.push(new InvalidToolError(tool.name, read.reason))
      }
    }
    return { kept, rejected }
  }

  /** Whether a tool named `name` has header parameters on record. */
  has(name: string): boolean { return this.#params.has(name) }

  /**
   * The `Mcp-Param-*` headers of a call to `name` with `args`: one per annotated parameter whose
   * argument is a string, a finite number or a boolean, encoded for a header (base64 sentinel when
   * needed); a missing or null argument sends no header.
   */
  headersFor(name: string, args: unknown): Record<string, string> | undefined {
    const params = this.#params.get(name)
    if (params === undefined) return undefined
    let headers: Record<string, string> | undefined
    for (const param of params) {
      const value = headerArgumentOf(args, param)
      if (value === undefined) continue
      headers ??= {}
      headers[headerNameOf(param)] = encodeHeaderValue(value)
    }
    return headers
  }

  /** The `Mcp-Param-*` headers of an outgoing request, when it is a tools/call of a known tool. */
  headersOfRequest(method: string, params: JsonObject | undefined): Record<string, string> | undefined {
    if (method !== 'tools/call' || typeof params?.name !== 'string') return undefined
    return this.headersFor(params.name, params.arguments)
  }
}
