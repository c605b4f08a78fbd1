/**
 * The OpenAI Chat Completions API (`POST /chat/completions`, and the servers that copy it) in and
 * out of the neutral shape of `messages.ts`: tool definitions, messages, tool results, the request
 * body, and the assembly of a streamed answer from its `data:` chunks. Pure: no I/O.
 *
 * ```
 * data: {choices:[{delta:{content}}]}            text, any number
 * data: {choices:[{delta:{tool_calls:[{index, id?, function:{name?, arguments}}]}}]}   fragments by index
 * data: {choices:[{finish_reason}]}              then usage (stream_options.include_usage)
 * data: [DONE]
 * ```
 */
import type { CallToolResult } from '../schema/types.ts'
import type { SseEvent } from '../codec/sse.ts'
import { ModelStreamError } from './errors.ts'
import {
  isPlainObject, parseToolCall, resultParts,
  type ModelEvent, type ModelMessage, type ModelRequest, type ModelToolCall, type ModelUsage, type NamedTool, type StopReason,
} from './messages.ts'

/** A tool as Chat Completions takes it. */
export interface OpenAiTool {
  type: 'function'
  function: { name: string; description?: string; parameters: Record<string, unknown> }
}

/** A tool call of an assistant message, its arguments as JSON text. */
export interface OpenAiToolCall {
  id: string
  type: 'function'
  function: { name: string; arguments: string }
}

/** A content part of a user message. */
export type OpenAiContentPart = { type: 'text'; text: string } | { type: 'image_url'; image_url: { url: string } }

/** One message of Chat Completions. */
export type OpenAiMessage =
  | { role: 'system'; content: string }
  | { role: 'user'; content: string | OpenAiContentPart[] }
  | { role: 'assistant'; content: string | null; tool_calls?: OpenAiToolCall[] }
  | { role: 'tool'; tool_call_id: string; content: string }

/** Keys of a schema's root the API rejects or ignores badly in `parameters`. */
const DROPPED_ROOT_KEYS = new Set(['$schema', '$id'])

/**
 * The schema as `parameters`: an object schema (`{ type: 'object', properties: {} }` when missing,
 * `type` forced to `'object'`, `properties` added when absent) without `$schema` or `$id`;
 * `$defs` and `$ref` are kept as they are.
 */
export function toOpenAiSchema(schema: Record<string, unknown> | undefined): Record<string, unknown> {
  if (!isPlainObject(schema)) return { type: 'object', properties: {} }
  const out: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(schema)) if (!DROPPED_ROOT_KEYS.has(key)) out[key] = value
  out.type = 'object'
  if (!isPlainObject(out.properties)) out.properties = {}
  return out
}

/** The tools in Chat Completions' format, under their namespaced names. */
export function toOpenAiTools(tools: readonly NamedTool[]): OpenAiTool[] {
  return tools.map(({ name, tool }) => ({
    type: 'function',
    function: {
      name,
      ...(tool.description !== undefined || tool.title !== undefined ? { description: tool.description ?? tool.title } : undefined),
      parameters: toOpenAiSchema(tool.inputSchema),
    },
  }))
}

/**
 * The text of a tool result for a `tool` message (which takes only text): text parts joined by
 * blank lines, images as a note, structuredContent as JSON when there is no text, `Error: ` before
 * an `isError` result, and `(no output)` for an empty one.
 */
export function toOpenAiToolResultText(result: CallToolResult): string {
  const text = resultParts(result)
    .map(part => part.type === 'text' ? part.text : `[image ${part.mimeType}, not shown: this API takes only text in tool results]`)
    .join('\n\n')
  const body = text === '' ? '(no output)' : text
  return result.isError ? `Error: ${body}` : body
}

/** An MCP tool result as a `role: 'tool'` message answering `toolCallId`. */
export function toOpenAiToolMessage(toolCallId: string, result: CallToolResult): OpenAiMessage {
  return { role: 'tool', tool_call_id: toolCallId, content: toOpenAiToolResultText(result) }
}

/** An assistant message's tool call as a neutral one; arguments that are not a JSON object make an invalid call. */
export function fromOpenAiToolCall(call: { id: string; function: { name: string; arguments?: string } }): ModelToolCall {
  return parseToolCall(call.id, call.function.name, call.function.arguments ?? '')
}

/**
 * Neutral messages as Chat Completions messages: the system prompt first; each tool result its own
 * `tool` message (before any other content of the same user message); images as data URLs.
 */
export function toOpenAiMessages(messages: readonly ModelMessage[], system?: string): OpenAiMessage[] {
  const out: OpenAiMessage[] = []
  if (system !== undefined && system !== '') out.push({ role: 'system', content: system })
  for (const message of messages) {
    if (message.role === 'assistant') {
      const text = message.content.flatMap(part => part.type === 'text' ? [part.text] : []).join('')
      const calls = message.content.flatMap((part): OpenAiToolCall[] => part.type !== 'tool-call' ? [] : [{
        id: part.id,
        type: 'function',
        function: { name: part.name, arguments: part.rawArguments ?? JSON.stringify(part.arguments) },
      }])
      out.push({ role: 'assistant', content: text === '' && calls.length > 0 ? null : text, ...(calls.length > 0 ? { tool_calls: calls } : undefined) })
      continue
    }
    const parts: OpenAiContentPart[] = []
    for (const part of message.content) {
      if (part.type === 'tool-result') out.push(toOpenAiToolMessage(part.id, part.result))
      else if (part.type === 'text') parts.push({ type: 'text', text: part.text })
      else if (part.type === 'image') parts.push({ type: 'image_url', image_url: { url: `data:${part.mimeType};base64,${part.data}` } })
    }
    if (parts.length === 0) continue
    out.push({ role: 'user', content: parts.every(part => part.type === 'text') ? parts.map(part => (part as { text: string }).text).join('\n') : parts })
  }
  return out
}

/** Settings of {@link openaiRequestBody}. */
export interface OpenAiBodyOptions {
  model: string
  /** Sent when set here or in the request. */
  maxTokens?: number
  /** The field for it: `max_completion_tokens` (OpenAI, default) or `max_tokens` (older compatible servers). */
  maxTokensField?: 'max_completion_tokens' | 'max_tokens'
  stream?: boolean
  /** Ask for a final usage chunk (`stream_options.include_usage`); default true when streaming. */
  includeUsage?: boolean
}

/** The JSON body of `POST /chat/completions` for a neutral request. */
export function openaiRequestBody(request: ModelRequest, options: OpenAiBodyOptions): Record<string, unknown> {
  const body: Record<string, unknown> = {
    model: options.model,
    messages: toOpenAiMessages(request.messages, request.system),
  }
  const maxTokens = request.maxTokens ?? options.maxTokens
  if (maxTokens !== undefined) body[options.maxTokensField ?? 'max_completion_tokens'] = maxTokens
  if (request.tools !== undefined && request.tools.length > 0) body.tools = toOpenAiTools(request.tools)
  if (request.temperature !== undefined) body.temperature = request.temperature
  if (request.stopSequences !== undefined && request.stopSequences.length > 0) body.stop = request.stopSequences
  if (options.stream) {
    body.stream = true
    if (options.includeUsage !== false) body.stream_options = { include_usage: true }
  }
  return body
}

/** Chat Completions' finish reason in MCP's words (`stop` with tool calls counts as `toolUse`). */
export function fromOpenAiFinishReason(reason: string | null | undefined, hasToolCalls = false): StopReason {
  switch (reason) {
    case 'tool_calls': case 'function_call': return 'toolUse'
    case 'stop': return hasToolCalls ? 'toolUse' : 'endTurn'
    case 'length': return 'maxTokens'
    case 'content_filter': return 'refusal'
    default: return hasToolCalls ? 'toolUse' : 'other'
  }
}

/**
 * Assembles a streamed answer: feed it each SSE event with `push`, emit what it returns. Text
 * deltas come at once; tool calls, assembled by `index`, when the choice finishes (or at the end);
 * `[DONE]` gives the final `message` event and sets `isDone`. Throws a {@link ModelStreamError} on
 * an `error` chunk or data that is not JSON.
 */
export interface OpenAiStreamAssembler {
  push(event: SseEvent): ModelEvent[]
  /** The final events for a stream that ended without `[DONE]` after a finish reason (some servers); throws if there was none. */
  end(): ModelEvent[]
  readonly isDone: boolean
}

/** Makes an {@link OpenAiStreamAssembler}. */
export function createOpenAiStreamAssembler(): OpenAiStreamAssembler {
  // The answer's text so far.
  let text = ''
  // Tool calls by index, their fragments concatenated.
  const calls = new Map<number, { id: string; name: string; json: string }>()
  // Set once the tool calls were parsed and emitted.
  let parsed: ModelToolCall[] | undefined
  // The model's name, from any chunk that carries it.
  let model = ''
  // From the usage chunk (stream_options.include_usage).
  const usage: ModelUsage = {}
  // The choice's finish reason, once it came.
  let finishReason: string | undefined
  // Set by [DONE] (or end()): later chunks are ignored.
  let isDone = false

  const emitCalls = (): ModelEvent[] => {
    if (parsed !== undefined) return []
    parsed = [...calls.keys()].sort((a, b) => a - b).map(index => {
      const call = calls.get(index)!
      return parseToolCall(call.id || `call_${index}`, call.name, call.json)
    })
    return parsed.map(call => ({ type: 'tool-call', call }))
  }

  const finish = (): ModelEvent[] => {
    const events = emitCalls()
    isDone = true
    const content: ModelMessage['content'] = [...(text !== '' ? [{ type: 'text' as const, text }] : []), ...parsed!]
    events.push({
      type: 'message',
      message: { role: 'assistant', content },
      stopReason: fromOpenAiFinishReason(finishReason, parsed!.length > 0),
      ...(finishReason !== undefined ? { rawStopReason: finishReason } : undefined),
      model,
      usage,
    })
    return events
  }

  return {
    get isDone() { return isDone },
    push(event) {
      if (isDone || event.data === '') return []
      if (event.data.trim() === '[DONE]') return finish()
      let chunk: Record<string, any>
      try { chunk = JSON.parse(event.data) } catch (cause) { throw new ModelStreamError('openai', 'chunk is not JSON', { cause }) }
      if (chunk.error !== undefined) throw new ModelStreamError('openai', String(chunk.error?.message ?? JSON.stringify(chunk.error)))
      if (typeof chunk.model === 'string' && chunk.model !== '') model = chunk.model
      if (isPlainObject(chunk.usage)) {
        if (typeof chunk.usage.prompt_tokens === 'number') usage.inputTokens = chunk.usage.prompt_tokens
        if (typeof chunk.usage.completion_tokens === 'number') usage.outputTokens = chunk.usage.completion_tokens
      }
      const out: ModelEvent[] = []
      const choice = Array.isArray(chunk.choices) ? chunk.choices.find((c: { index?: number }) => (c.index ?? 0) === 0) : undefined
      if (choice === undefined) return out
      const delta = choice.delta ?? {}
      if (typeof delta.content === 'string' && delta.content !== '') {
        text += delta.content
        out.push({ type: 'text', delta: delta.content })
      }
      for (const fragment of Array.isArray(delta.tool_calls) ? delta.tool_calls : []) {
        const index = typeof fragment.index === 'number' ? fragment.index : calls.size
        const call = calls.get(index) ?? { id: '', name: '', json: '' }
        if (typeof fragment.id === 'string' && fragment.id !== '') call.id = fragment.id
        // OpenAI sends the name once; some compatible servers repeat it in every fragment.
        const name = fragment.function?.name
        if (typeof name === 'string' && name !== call.name) call.name += name
        if (typeof fragment.function?.arguments === 'string') call.json += fragment.function.arguments
        calls.set(index, call)
      }
      if (typeof choice.finish_reason === 'string') {
        finishReason = choice.finish_reason
        out.push(...emitCalls())
      }
      return out
    },
    end() {
      if (isDone) return []
      if (finishReason === undefined) throw new ModelStreamError('openai', 'the stream ended before the answer was complete')
      return finish()
    },
  }
}
