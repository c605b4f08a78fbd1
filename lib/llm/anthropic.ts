/**
 * The Anthropic Messages API (`POST /v1/messages`) in and out of the neutral shape of
 * `messages.ts`: tool definitions, messages, tool results, the request body, and the assembly of a
 * streamed answer from its SSE events. Pure: no I/O (the adapter in host/model.ts does it).
 *
 * ```
 * message_start ─┬─ content_block_start ─ content_block_delta* ─ content_block_stop ─┬─ message_delta ─ message_stop
 *                └──────────────────────────── (one per block) ◄──────────────────────┘
 * ```
 */
import type { CallToolResult } from '../schema/types.ts'
import type { SseEvent } from '../codec/sse.ts'
import { ModelStreamError } from './errors.ts'
import {
  isPlainObject, parseToolCall, resultParts,
  type ModelEvent, type ModelMessage, type ModelRequest, type ModelToolCall, type ModelUsage, type NamedTool, type StopReason,
} from './messages.ts'

/** A tool as the Messages API takes it. */
export interface AnthropicTool {
  name: string
  description?: string
  input_schema: Record<string, unknown>
}

/** A text or image block (what a `tool_result` may contain). */
export type AnthropicContentBlock =
  | { type: 'text'; text: string }
  | { type: 'image'; source: { type: 'base64'; media_type: string; data: string } }

/** A `tool_result` block of a user message. */
export interface AnthropicToolResultBlock {
  type: 'tool_result'
  tool_use_id: string
  content: AnthropicContentBlock[]
  is_error?: boolean
}

/** A `tool_use` block of an assistant message. */
export interface AnthropicToolUseBlock {
  type: 'tool_use'
  id: string
  name: string
  input: unknown
}

/** One message of the Messages API. */
export interface AnthropicMessage {
  role: 'user' | 'assistant'
  content: Array<AnthropicContentBlock | AnthropicToolUseBlock | AnthropicToolResultBlock>
}

/**
 * The schema as `input_schema`: always `type: 'object'` (a missing or other type is replaced),
 * everything else kept, `$defs` and `$ref` included.
 */
export function toAnthropicSchema(schema: Record<string, unknown> | undefined): Record<string, unknown> {
  const out: Record<string, unknown> = isPlainObject(schema) ? { ...schema } : {}
  out.type = 'object'
  return out
}

/** The tools in the Messages API's format, under their namespaced names. */
export function toAnthropicTools(tools: readonly NamedTool[]): AnthropicTool[] {
  return tools.map(({ name, tool }) => ({
    name,
    ...(tool.description !== undefined || tool.title !== undefined ? { description: tool.description ?? tool.title } : undefined),
    input_schema: toAnthropicSchema(tool.inputSchema),
  }))
}

/** An MCP tool result as a `tool_result` block: text and image blocks (see `resultParts`), and `is_error`. */
export function toAnthropicToolResult(toolUseId: string, result: CallToolResult): AnthropicToolResultBlock {
  const content: AnthropicContentBlock[] = resultParts(result).map(part => part.type === 'text'
    ? { type: 'text', text: part.text }
    : { type: 'image', source: { type: 'base64', media_type: part.mimeType, data: part.data } })
  return { type: 'tool_result', tool_use_id: toolUseId, content, ...(result.isError ? { is_error: true } : undefined) }
}

/** A `tool_use` block as a neutral tool call; an `input` that is not an object makes an invalid call. */
export function fromAnthropicToolUse(block: { id: string; name: string; input?: unknown }): ModelToolCall {
  if (block.input === undefined) return { type: 'tool-call', id: block.id, name: block.name, arguments: {} }
  if (isPlainObject(block.input)) return { type: 'tool-call', id: block.id, name: block.name, arguments: block.input }
  return parseToolCall(block.id, block.name, typeof block.input === 'string' ? block.input : JSON.stringify(block.input))
}

/** Neutral messages as Messages API messages (empty text parts dropped: the API rejects them). */
export function toAnthropicMessages(messages: readonly ModelMessage[]): AnthropicMessage[] {
  return messages.map(message => ({
    role: message.role,
    content: message.content.flatMap((part): AnthropicMessage['content'] => {
      switch (part.type) {
        case 'text': return part.text === '' ? [] : [{ type: 'text', text: part.text }]
        case 'image': return [{ type: 'image', source: { type: 'base64', media_type: part.mimeType, data: part.data } }]
        case 'tool-call': return [{ type: 'tool_use', id: part.id, name: part.name, input: part.arguments }]
        case 'tool-result': return [toAnthropicToolResult(part.id, part.result)]
      }
    }),
  }))
}

/** Settings of {@link anthropicRequestBody}. */
export interface AnthropicBodyOptions {
  model: string
  /** Used when the request sets none (the API requires `max_tokens`). */
  maxTokens: number
  stream?: boolean
}

/** The JSON body of `POST /v1/messages` for a neutral request. */
export function anthropicRequestBody(request: ModelRequest, options: AnthropicBodyOptions): Record<string, unknown> {
  const body: Record<string, unknown> = {
    model: options.model,
    max_tokens: request.maxTokens ?? options.maxTokens,
    messages: toAnthropicMessages(request.messages),
  }
  if (request.system !== undefined && request.system !== '') body.system = request.system
  if (request.tools !== undefined && request.tools.length > 0) body.tools = toAnthropicTools(request.tools)
  if (request.temperature !== undefined) body.temperature = request.temperature
  if (request.stopSequences !== undefined && request.stopSequences.length > 0) body.stop_sequences = request.stopSequences
  if (options.stream) body.stream = true
  return body
}

/** The Messages API's stop reason in MCP's words. */
export function fromAnthropicStopReason(reason: string | null | undefined): StopReason {
  switch (reason) {
    case 'end_turn': return 'endTurn'
    case 'tool_use': return 'toolUse'
    case 'max_tokens': return 'maxTokens'
    case 'stop_sequence': return 'stopSequence'
    case 'refusal': return 'refusal'
    default: return 'other'
  }
}

/**
 * Assembles a streamed answer: feed it each SSE event with `push`, emit what it returns; after
 * `message_stop` it returns the final `message` event and `isDone` holds. Throws a
 * {@link ModelStreamError} on an `error` event or data that is not JSON.
 */
export interface AnthropicStreamAssembler {
  push(event: SseEvent): ModelEvent[]
  readonly isDone: boolean
}

/** Makes an {@link AnthropicStreamAssembler}. */
export function createAnthropicStreamAssembler(): AnthropicStreamAssembler {
  // The blocks of the answer by index: text so far, or a tool_use with its JSON so far.
  const blocks = new Map<number, { type: 'text'; text: string } | { type: 'tool_use'; id: string; name: string; json: string; call?: ModelToolCall }>()
  // The model's name, from message_start.
  let model = ''
  // Input tokens from message_start, output tokens from message_delta.
  const usage: ModelUsage = {}
  // From message_delta.
  let rawStopReason: string | undefined
  // Set by message_stop.
  let isDone = false

  const finish = (): ModelEvent[] => {
    isDone = true
    const content: ModelMessage['content'] = []
    for (const index of [...blocks.keys()].sort((a, b) => a - b)) {
      const block = blocks.get(index)!
      if (block.type === 'text') { if (block.text !== '') content.push({ type: 'text', text: block.text }) }
      else content.push(block.call ?? parseToolCall(block.id, block.name, block.json))
    }
    return [{
      type: 'message',
      message: { role: 'assistant', content },
      stopReason: fromAnthropicStopReason(rawStopReason),
      ...(rawStopReason !== undefined ? { rawStopReason } : undefined),
      model,
      usage,
    }]
  }

  return {
    get isDone() { return isDone },
    push(event) {
      if (event.data === '') return []
      let data: Record<string, any>
      try { data = JSON.parse(event.data) } catch (cause) { throw new ModelStreamError('anthropic', 'event data is not JSON', { cause }) }
      switch (data.type) {
        case 'message_start':
          model = data.message?.model ?? ''
          readUsage(usage, data.message?.usage)
          return []
        case 'content_block_start': {
          const block = data.content_block ?? {}
          if (block.type === 'text') {
            blocks.set(data.index, { type: 'text', text: block.text ?? '' })
            return block.text ? [{ type: 'text', delta: block.text }] : []
          }
          if (block.type === 'tool_use') {
            // The input arrives as input_json_delta fragments; a non-empty start input is its whole value.
            const json = isPlainObject(block.input) && Object.keys(block.input).length > 0 ? JSON.stringify(block.input) : ''
            blocks.set(data.index, { type: 'tool_use', id: block.id, name: block.name, json })
          }
          return []
        }
        case 'content_block_delta': {
          const block = blocks.get(data.index)
          const delta = data.delta ?? {}
          if (block?.type === 'text' && delta.type === 'text_delta') {
            block.text += delta.text
            return [{ type: 'text', delta: delta.text }]
          }
          if (block?.type === 'tool_use' && delta.type === 'input_json_delta') block.json += delta.partial_json ?? ''
          return []
        }
        case 'content_block_stop': {
          const block = blocks.get(data.index)
          if (block?.type !== 'tool_use') return []
          block.call = parseToolCall(block.id, block.name, block.json)
          return [{ type: 'tool-call', call: block.call }]
        }
        case 'message_delta':
          if (data.delta?.stop_reason !== undefined) rawStopReason = data.delta.stop_reason ?? undefined
          readUsage(usage, data.usage)
          return []
        case 'message_stop':
          return finish()
        case 'error':
          throw new ModelStreamError('anthropic', `${data.error?.type ?? 'error'}: ${data.error?.message ?? 'unknown error'}`)
        default:
          return [] // ping, and event types added later
      }
    },
  }
}

function readUsage(usage: ModelUsage, from: Record<string, unknown> | undefined): void {
  if (typeof from?.input_tokens === 'number') usage.inputTokens = from.input_tokens
  if (typeof from?.output_tokens === 'number') usage.outputTokens = from.output_tokens
}
