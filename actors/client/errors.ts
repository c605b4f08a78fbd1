import { CapabilityError, LocalError, LocalErrorCode, ProtocolError } from '../../lib/jsonrpc/errors.ts'

/**
 * A server's result this client cannot use: an unknown `resultType`, an `input_required` result on
 * a method that never takes one, or one without any input request and without `requestState`, a
 * malformed `inputRequests` map, a discover result without `supportedVersions`. Local: it fails the
 * request it answers, never the session.
 */
export class InvalidResultError extends ProtocolError {
  override name = 'InvalidResultError'
  constructor(readonly method: string, readonly reason: string, options?: { cause?: unknown }) {
    super(`Invalid result for ${method}: ${reason}`, options)
  }
}

/**
 * A multi-round-trip request (MCP 2026-07-28 MRTR) was still answered `input_required` after the
 * client had answered `rounds` rounds of input requests (`ClientOptions.maxInputRounds`).
 */
export class InputRoundsExceededError extends ProtocolError {
  override name = 'InputRoundsExceededError'
  constructor(readonly method: string, readonly rounds: number) {
    super(`${method} still required input after ${rounds} rounds (maxInputRounds); giving up`)
  }
}

/**
 * The server speaks the modern era but none of the revisions it supports is one this client
 * speaks: `serverVersions` came from `-32022 UnsupportedProtocolVersion` (`data.supported`) or
 * from `server/discover` (`supportedVersions`).
 */
export class NoCommonVersionError extends LocalError {
  override name = 'NoCommonVersionError'
  readonly code = LocalErrorCode.Version
  constructor(readonly serverVersions: readonly string[], readonly clientVersions: readonly string[], options?: { cause?: unknown }) {
    super(`No protocol version in common: the server supports ${list(serverVersions)}; this client supports ${list(clientVersions)}`, options)
  }
}

/**
 * A tool from tools/list whose `x-mcp-header` annotations break the Streamable HTTP rules (MCP
 * 2026-07-28): the client leaves it out of the list and reports this error through
 * `reportUnhandledError`, as the warning the spec asks for.
 */
export class InvalidToolError extends ProtocolError {
  override name = 'InvalidToolError'
  constructor(readonly tool: string, readonly reason: string) {
    super(`Tool ${JSON.stringify(tool)} is excluded from the tool list: ${reason}`)
  }
}

/**
 * A tool call the server's tool definition says cannot succeed, refused before it reaches the wire
 * (MCP 2025-11-25 tasks, tool-level negotiation; the server answers either with -32601): a call as
 * a task of a tool whose `execution.taskSupport` is "forbidden" or absent (`taskSupport:
 * 'forbidden'`; call it with `callTool`), or a plain call of one whose `taskSupport` is "required"
 * (call it with `callToolAsTask`). Only for tools the client listed, in the legacy era, from a
 * server that declared `tasks.requests.tools.call`. Its `code` is `RXMCP_ERR_CAPABILITY`.
 */
export class ToolTaskSupportError extends CapabilityError {
  override name = 'ToolTaskSupportError'
  constructor(readonly tool: string, readonly taskSupport: 'forbidden' | 'required') {
    super(taskSupport === 'required'
      ? `Tool ${JSON.stringify(tool)} must run as a task (its execution.taskSupport is "required"): call it with callToolAsTask`
      : `Tool ${JSON.stringify(tool)} cannot run as a task (its execution.taskSupport is "forbidden" or absent): call it with callTool`)
  }
}

function list(versions: readonly string[]): string {
  return versions.length === 0 ? 'none' : versions.join(', ')
}
