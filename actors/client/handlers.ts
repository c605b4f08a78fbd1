import type { Connection, IncomingRequest } from '../../lib/connection.ts'
import type { JsonObject } from '../../lib/jsonrpc/message.ts'
import { InvalidParamsError } from '../../lib/jsonrpc/errors.ts'
import { isJsonObject } from '../../lib/jsonrpc/guards.ts'
import { applyDefaults } from '../../lib/validator.ts'
import type { ClientCapabilities, CreateMessageParams, ElicitParams } from '../../lib/schema/types.ts'
import type { ActorRef } from '../actor.ts'
import { BaseContext, type ContextHost } from '../context.ts'
import { mapOutcome } from '../request.ts'
import type { ClientMessage, ClientOptions, ClientState } from './api.ts'

/**
 * Registers on one connection the handlers of what the server may ask the client: sampling,
 * elicitation (by mode, form answers completed with the schema's defaults) and roots, each only
 * when the client declared it. Called for every connection a client opens (each reconnect).
 */
export function registerClientHandlers(connection: Connection, options: ClientOptions, capabilities: ClientCapabilities, actor: ActorRef<ClientState, ClientMessage>): void {
  const { sampling, elicitation } = options
  // Contexts answer on the connection their request came in on, even while a newer one starts.
  const host: ContextHost = { connection, get protocolVersion() { return actor.state.protocolVersion } }
  const context = (request: IncomingRequest) => new BaseContext(host, request)
  if (sampling !== undefined) {
    connection.setRequestHandler('sampling/createMessage', (params, request) =>
      mapOutcome(() => sampling(params as unknown as CreateMessageParams, context(request)), toObject, rethrow))
  }
  if (elicitation?.form !== undefined || elicitation?.url !== undefined) {
    connection.setRequestHandler('elicitation/create', (params, request) => {
      const mode = params?.mode === 'url' ? 'url' : 'form'
      const handler = elicitation[mode]
      if (handler === undefined) throw new InvalidParamsError(`Invalid params: this client does not support ${mode} elicitation`)
      const schema = mode === 'form' && isJsonObject(params?.requestedSchema) ? params!.requestedSchema : undefined
      return mapOutcome(() => handler(params as unknown as ElicitParams, context(request)), result =>
        // Fields the user left out take the schema's defaults, so the server sees complete forms.
        schema !== undefined && result.action === 'accept' ? { ...result, content: applyDefaults(schema, result.content as Record<string, unknown> | undefined) } as JsonObject : toObject(result), rethrow)
    })
  }
  if (capabilities.roots !== undefined) {
    connection.setRequestHandler('roots/list', () => ({ roots: actor.state.roots }))
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
