/**
 * The provider-neutral shape of a model conversation: messages, tool calls, tool results and the
 * events a streamed answer is made of. The Anthropic and OpenAI mappings (`anthropic.ts`,
 * `openai.ts`) translate it to and from each wire format; a history kept in this shape can be
 * continued with either provider.
 */
import type { CallToolResult, Tool } from '../schema/types.ts'

/** A tool offered to a model: the name the model sees and the MCP definition (the host's `HostTool` fits). */
export interface NamedTool {
  readonly name: string
  readonly tool: Tool
}

/** Text in a message. */
export interface ModelText {
  type: 'text'
  text: string
}

/** An image in a (user) message, base64 encoded. */
export interface ModelImage {
  type: 'image'
  data: string
  mimeType: string
}

/** A tool call the model made (only in assistant messages). */
export interface ModelToolCall {
  type: 'tool-call'
  id: string
  name: string
  /** The parsed arguments; `{}` when they could not be parsed (see `invalidArguments`). */
  arguments: Record<string, unknown>
  /** Why the arguments could not be used (not JSON, not an object); the call is then not made. */
  invalidArguments?: string
  /** The arguments as the model wrote them, when they were not valid (kept to send back as given). */
  rawArguments?: string
}

/** The result of a tool call, fed back to the model (only in user messages). */
export interface ModelToolResult {
  type: 'tool-result'
  /** The id of the {@link ModelToolCall} it answers. */
  id: string
  name: string
  result: CallToolResult
}

/** One part of a message. */
export type ModelContent = ModelText | ModelImage | ModelToolCall | ModelToolResult

/** One message of a conversation. The system prompt travels apart, in {@link ModelRequest}. */
export interface ModelMessage {
  role: 'user' | 'assistant'
  content: ModelContent[]
}

/** Why the model stopped, in MCP's words (`other` keeps the provider's reason in `rawStopReason`). */
export type StopReason = 'endTurn' | 'toolUse' | 'maxTokens' | 'stopSequence' | 'refusal' | 'other'

/** Tokens a request used, as the provider reported them. */
export interface ModelUsage {
  inputTokens?: number
  outputTokens?: number
}

/** One model request: the whole conversation so far and the tools the model may call. */
export interface ModelRequest {
  system?: string
  messages: readonly ModelMessage[]
  tools?: readonly NamedTool[]
  /** Overrides the adapter's default. */
  maxTokens?: number
  temperature?: number
  stopSequences?: string[]
}

/** The final event of a model answer: the assembled assistant message and why it ended. */
export interface ModelMessageEvent {
  type: 'message'
  message: ModelMessage
  stopReason: StopReason
  /** The provider's own stop reason. */
  rawStopReason?: string
  /** The model that answered, as the provider named it. */
  model: string
  usage: ModelUsage
}

/**
 * What a streamed model answer emits: text as it arrives, each tool call once its arguments are
 * complete, then one `message` event, after which the stream completes.
 */
export type ModelEvent =
  | { type: 'text'; delta: string }
  | { type: 'tool-call'; call: ModelToolCall }
  | ModelMessageEvent

/**
 * Parses tool-call arguments the model wrote as JSON text. Never throws: text that is not a JSON
 * object gives `{}` with `invalidArguments` (and the text in `rawArguments`). Empty text is `{}`.
 */
export function parseToolCall(id: string, name: string, json: string): ModelToolCall {
  if (json.trim() === '') return { type: 'tool-call', id, name, arguments: {} }
  let value: unknown
  try {
    value = JSON.parse(json)
  } catch (error) {
    return { type: 'tool-call', id, name, arguments: {}, invalidArguments: `arguments are not valid JSON: ${(error as Error).message}`, rawArguments: json }
  }
  if (!isPlainObject(value)) return { type: 'tool-call', id, name, arguments: {}, invalidArguments: 'arguments are not a JSON object', rawArguments: json }
  return { type: 'tool-call', id, name, arguments: value }
}

/** The error result fed back for a call whose arguments were not usable (the model can retry). */
export function invalidArgumentsResult(call: ModelToolCall): CallToolResult {
  return errorResult(`Tool ${call.name} was not called: ${call.invalidArguments ?? 'invalid arguments'}. Send the arguments as one JSON object.`)
}

/** A tool result with one text block and `isError: true`. */
export function errorResult(text: string): CallToolResult {
  return { content: [{ type: 'text', text }], isError: true }
}

/** A part of a tool result every provider can take: text, or an image. */
export type ResultPart = ModelText | ModelImage

/**
 * Flattens an MCP tool result into text and image parts: text as is; images as images; audio,
 * binary resources and resource links as short notes; embedded text resources as text headed by
 * their URI; `structuredContent` as JSON text when the result has no text of its own.
 */
export function resultParts(result: CallToolResult): ResultPart[] {
  const parts: ResultPart[] = []
  for (const block of result.content ?? []) {
    switch (block.type) {
      case 'text': parts.push({ type: 'text', text: block.text }); break
      case 'image': parts.push({ type: 'image', data: block.data, mimeType: block.mimeType }); break
      case 'audio': parts.push({ type: 'text', text: `[audio ${block.mimeType}, ${base64Bytes(block.data)} bytes, not shown]` }); break
      case 'resource': {
        const resource = block.resource
        if ('text' in resource) parts.push({ type: 'text', text: `[resource ${resource.uri}${resource.mimeType ? ` (${resource.mimeType})` : ''}]\n${resource.text}` })
        else if (resource.mimeType?.startsWith('image/')) parts.push({ type: 'image', data: resource.blob, mimeType: resource.mimeType })
        else parts.push({ type: 'text', text: `[resource ${resource.uri}${resource.mimeType ? ` (${resource.mimeType})` : ''}, ${base64Bytes(resource.blob)} bytes of binary data, not shown]` })
        break
      }
      case 'resource_link': {
        const about = [block.title ?? block.name, block.mimeType, block.description].filter(Boolean).join(', ')
        parts.push({ type: 'text', text: `[resource link ${block.uri}${about ? `: ${about}` : ''}]` })
        break
      }
      default: parts.push({ type: 'text', text: `[${(block as { type: string }).type} content, not shown]` })
    }
  }
  if (result.structuredContent !== undefined && !parts.some(part => part.type === 'text')) {
    parts.push({ type: 'text', text: JSON.stringify(result.structuredContent) })
  }
  return parts
}

/** The text of a message's text parts, joined. */
export function messageText(message: ModelMessage): string {
  return message.content.flatMap(part => part.type === 'text' ? [part.text] : []).join('')
}

/** The tool calls of a message. */
export function messageToolCalls(message: ModelMessage): ModelToolCall[] {
  return message.content.filter((part): part is ModelToolCall => part.type === 'tool-call')
}

/** True for a non-null, non-array object. */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

function base64Bytes(data: string): number {
  const clean = data.replace(/=+$/, '')
  return Math.floor(clean.length * 3 / 4)
}
