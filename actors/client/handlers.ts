import type { Connection, IncomingRequest } from '../../lib/connection.ts'
import type { JsonObject } from '../../lib/jsonrpc/message.ts'
import { InvalidParamsError } from '../../lib/jsonrpc/errors.ts'
import { isJsonObject } from '../../lib/jsonrpc/guards.ts'
import { applyDefaults } from '../../lib/validator.ts'
import { inputRequestProblem } from '../../lib/schema/input-requests.ts'
import type { ClientCapabilities, CreateMessageParams, ElicitParams, Root } from '../../lib/schema/types.ts'
import { BaseContext, connectionHost } from '../context.ts'
import { mapOutcome } from '../request.ts'
import type { ClientOptions } from './api.ts'
import type { ClientStateSource } from './state.ts'
import type { UrlElicitations } from './url-elicitations.ts'
import type { InputHandler } from './input-answers.ts'
export { answerInputRequest, type InputAnswerHost, type InputHandler } from './input-answers.ts'


/**
 * The handlers of what the server may ask, by method, each present only when the client declared
 * it: `sampling/createMessage`, `elicitation/create` (by mode; form answers completed with the
 * schema's defaults) and `roots/list` (the roots held in the client's state). A request that
 * breaks MCP's rules for its params (a sampling message without a role or content, tool results
 * mixed with other content or not answering each tool use, a URL elicitation without a valid url
 * or an elicitationId) is answered -32602 and never reaches the application's handler. The id of
 * each URL elicitation taken is noted in `urlElicitations`, whose completion the client then hears.
 */
export function inputHandlers(options: ClientOptions, capabilities: ClientCapabilities, roots: () => Root[], urlElicitations?: UrlElicitations): Map<string, InputHandler> {
  const handlers = new Map<string, InputHandler>()
  const { sampling, elicitation } = options
  if (sampling !== undefined) {
    handlers.set('sampling/createMessage', (params, ctx) => {
      // MCP 2025-11-25 schema (CreateMessageRequestParams.tools): the client MUST return an error
      // when tools or toolChoice come without its sampling.tools capability.
      if ((params?.tools !== undefined || params?.toolChoice !== undefined) && capabilities.sampling?.tools === undefined) {
        throw new InvalidParamsError('Invalid params: this client did not declare sampling.tools')
      }
      // MCP sampling: roles, content, tool results alone in their message, each tool use answered.
      const problem = inputRequestProblem('sampling/createMessage', params)
      if (problem !== undefined) throw new InvalidParamsError(`Invalid params: ${problem}`)
      return mapOutcome(() => sampling(params as unknown as CreateMessageParams, ctx), toObject, rethrow)
    })
  }
  if (elicitation?.form !== undefined || elicitation?.url !== undefined) {
    handlers.set('elicitation/create', (params, ctx) => {
      const mode = params?.mode === 'url' ? 'url' : 'form'
      const handler = elicitation[mode]
      if (handler === undefined) throw new InvalidParamsError(`Invalid params: this client does not support ${mode} elicitation`)
      const problem = inputRequestProblem('elicitation/create', params)
      if (problem !== undefined) throw new InvalidParamsError(`Invalid params: ${problem}`)
      if (mode === 'url') urlElicitations?.saw(params!.elicitationId as string)
      const schema = mode === 'form' && isJsonObject(params?.requestedSchema) ? params!.requestedSchema : undefined
      return mapOutcome(() => handler(params as unknown as ElicitParams, ctx), result =>
        // Fields the user left out take the schema's defaults, so the server sees complete forms.
        schema !== undefined && result.action === 'accept' ? { ...result, content: applyDefaults(schema, result.content as Record<string, unknown> | undefined) } as JsonObject : toObject(result), rethrow)
    })
  }
  if (capabilities.roots !== undefined) handlers.set('roots/list', () => ({ roots: roots() }))
  return handlers
}

/**
 * Registers the input handlers on one connection, for the live requests a legacy server sends.
 * Called for every connection a client opens (each reconnect).
 */
export function registerClientHandlers(connection: Connection, handlers: ReadonlyMap<string, InputHandler>, state: ClientStateSource, report?: (warning: Error) => void): void {
  // Contexts answer on the connection their request came in on, even while a newer one starts.
  const host = connectionHost(connection, () => state.current.protocolVersion, report)
  for (const [method, handler] of handlers) {
    connection.setRequestHandler(method, (params, request: IncomingRequest) => handler(params, new BaseContext(host, request)))
  }
}


/** The capabilities a client declares: those given, plus those its handlers imply. */
export function declaredCapabilities(options: ClientOptions): ClientCapabilities {
  const capabilities: ClientCapabilities = { ...options.capabilities }
  if (options.sampling !== undefined) capabilities.sampling = { ...capabilities.sampling, ...(options.samplingTools ? { tools: {} } : undefined) }
  if (options.elicitation?.form !== undefined || options.elicitation?.url !== undefined) {
    capabilities.elicitation = {
      ...capabilities.elicitation,
      ...(options.elicitation.form !== undefined ? { form: {} } : undefined),
      ...(options.elicitation.url !== undefined ? { url: {} } : undefined),
    }
  }
  if (options.roots !== undefined) capabilities.roots = { listChanged: true, ...capabilities.roots }
  return capabilities
}

function toObject<T>(value: T): JsonObject {
  return value as unknown as JsonObject
}

function rethrow(error: unknown): never {
  throw error
}
