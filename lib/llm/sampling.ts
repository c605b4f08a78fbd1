/**
 * MCP `sampling/createMessage` in and out of the neutral model shape: the params as one
 * {@link ModelRequest}, the model's answer as a `CreateMessageResult`. Pure.
 */
import type { CreateMessageParams, CreateMessageResult, SamplingContent } from '../schema/types.ts'
import { isPlainObject, type ModelContent, type ModelMessage, type ModelMessageEvent, type ModelRequest } from './messages.ts'

/** Settings of {@link samplingRequest}. */
export interface SamplingRequestOptions {
  /** The most tokens to grant, whatever the server asks for. */
  maxTokensLimit?: number
  /** Put before the server's system prompt (the host's own rules). */
  systemPrompt?: string
}

/**
 * The request for a server's sampling params: its messages (text, images, and the tool use and
 * results of sampling with tools; audio as a note), system prompt, `maxTokens` (capped by
 * `maxTokensLimit`), temperature, stop sequences and tools.
 */
export function samplingRequest(params: CreateMessageParams, options: SamplingRequestOptions = {}): ModelRequest {
  // Tool names by call id, for tool results (MCP's carry only the id).
  const names = new Map<string, string>()
  const messages: ModelMessage[] = params.messages.map(message => ({
    role: message.role,
    content: (Array.isArray(message.content) ? message.content : [message.content]).map(content => toModelContent(content, names)),
  }))
  const system = [options.systemPrompt, params.systemPrompt].filter(text => text !== undefined && text !== '').join('\n\n')
  const maxTokens = options.maxTokensLimit !== undefined ? Math.min(params.maxTokens, options.maxTokensLimit) : params.maxTokens
  return {
    messages,
    maxTokens,
    ...(system !== '' ? { system } : undefined),
    ...(params.temperature !== undefined ? { temperature: params.temperature } : undefined),
    ...(params.stopSequences !== undefined ? { stopSequences: params.stopSequences } : undefined),
    ...(params.tools !== undefined && params.tools.length > 0 && params.toolChoice?.mode !== 'none'
      ? { tools: params.tools.map(tool => ({ name: tool.name, tool })) }
      : undefined),
  }
}

function toModelContent(content: SamplingContent, names: Map<string, string>): ModelContent {
  switch (content.type) {
    case 'text': return { type: 'text', text: content.text }
    case 'image': return { type: 'image', data: content.data, mimeType: content.mimeType }
    case 'audio': return { type: 'text', text: `[audio ${content.mimeType}, not shown]` }
    case 'tool_use':
      names.set(content.id, content.name)
      return { type: 'tool-call', id: content.id, name: content.name, arguments: isPlainObject(content.input) ? content.input : {} }
    case 'tool_result':
      return {
        type: 'tool-result',
        id: content.toolUseId,
        name: names.get(content.toolUseId) ?? '',
        result: {
          content: content.content,
          ...(content.structuredContent !== undefined ? { structuredContent: content.structuredContent } : undefined),
          ...(content.isError ? { isError: true } : undefined),
        },
      }
  }
}

/**
 * The model's answer as a sampling result: role assistant; its text as one text block (tool calls
 * as `tool_use` blocks after it, when it made any); the model's name; the stop reason in MCP's
 * words (`endTurn`, `maxTokens`, `stopSequence`, `toolUse`, or the provider's own).
 */
export function samplingResult(event: ModelMessageEvent): CreateMessageResult {
  const text = event.message.content.flatMap(part => part.type === 'text' ? [part.text] : []).join('')
  const calls = event.message.content.flatMap((part): SamplingContent[] => part.type !== 'tool-call' ? [] : [{
    type: 'tool_use', id: part.id, name: part.name, input: part.arguments,
  }])
  const textBlock: SamplingContent = { type: 'text', text }
  const stopReason = event.stopReason === 'other' || event.stopReason === 'refusal' ? event.rawStopReason ?? event.stopReason : event.stopReason
  return {
    role: 'assistant',
    content: calls.length === 0 ? textBlock : text === '' ? calls : [textBlock, ...calls],
    model: event.model,
    stopReason,
  }
}
