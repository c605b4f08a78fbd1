/**
 * `rxmcp/errors`: Every error rxmcp throws or answers with, and the codes: `McpError` and its JSON-
 * RPC subclasses, the local errors (timeouts, cancellation, closed connections, transport and HTTP
 * failures), the client's and the tasks' own errors, and the warnings it emits.
 */
export {
  ErrorCode, LocalErrorCode, McpError, ParseError, InvalidRequestError, MethodNotFoundError, InvalidParamsError,
  InternalError, ResourceNotFoundError, UrlElicitationRequiredError, HeaderMismatchError,
  MissingRequiredClientCapabilityError, UnsupportedProtocolVersionError, ForbiddenError, RateLimitedError, LocalError,
  TimeoutError, CancelledError, TaskCancelledError, ConnectionClosedError, TransportError, HttpStatusError,
  ResponseLostError, FrameTooLargeError, CapabilityError, ProtocolError, UnsupportedVersionError, StructureLimitError,
  ElicitationContentError, RXMCP_ERROR_CODE_RANGE, LegacyErrorCode,
} from '../lib/jsonrpc/errors.ts'
export type { StructureBound, UrlElicitationRequiredData, FrameTooLargeDetails } from '../lib/jsonrpc/errors.ts'
export {
  InputRoundsExceededError, InvalidResultError, InvalidToolError, NoCommonVersionError, ToolTaskSupportError,
} from '../actors/client.ts'
export { ToolNameWarning } from '../lib/tool-names.ts'
export type { Challenge } from '../lib/www-authenticate.ts'
export { ProgressWarning } from '../lib/operators/progress.ts'
export { RegistryMismatchWarning } from '../actors/server/registry-sync.ts'
export { UnauthorizedError } from '../lib/unauthorized-error.ts'
