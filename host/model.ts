/**
 * Model adapters: one streamed model request in the provider-neutral shape of lib/llm/messages.ts,
 * over HTTP with `fetch` (no provider SDK). `anthropicModel` speaks the Anthropic Messages API,
 * `openaiModel` OpenAI Chat Completions and the servers that copy it (vLLM, Ollama, LM Studio,
 * llama.cpp, OpenRouter... through `baseUrl`). `samplingViaModel` answers MCP sampling with one.
 */
import { Observable, map } from '../lib/rx.ts'
import { createSseParser, type SseEvent } from '../lib/codec/sse.ts'
import { anthropicRequestBody, createAnthropicStreamAssembler } from '../lib/llm/anthropic.ts'
import { createOpenAiStreamAssembler, openaiRequestBody } from '../lib/llm/openai.ts'
import { samplingRequest, samplingResult, type SamplingRequestOptions } from '../lib/llm/sampling.ts'
import { ModelHttpError, ModelStreamError, parseRetryAfter, redact } from '../lib/llm/errors.ts'
import type { ModelEvent, ModelMessageEvent, ModelRequest } from '../lib/llm/messages.ts'
import type { CreateMessageParams, CreateMessageResult } from '../lib/schema/types.ts'

export type {
  ModelContent, ModelEvent, ModelImage, ModelMessage, ModelMessageEvent, ModelRequest, ModelText, ModelToolCall,
  ModelToolResult, ModelUsage, NamedTool, StopReason,
} from '../lib/llm/messages.ts'
export { ModelHttpError, ModelStreamError, ModelErrorCode } from '../lib/llm/errors.ts'

/**
 * One model behind one interface: `request` streams the answer to one request. Cold: subscribing
 * sends the request, unsubscribing aborts it. Emits `text` deltas, a `tool-call` for each complete
 * tool call, then one `message` event (the assembled assistant message, stop reason, usage) and
 * completes. Fails with a {@link ModelHttpError} (status, redacted body) or a {@link ModelStreamError}.
 */
export interface ModelAdapter {
  /** `'anthropic'`, `'openai'`, or a custom adapter's name. */
  readonly provider: string
  /** The model asked for. */
  readonly model: string
  request(request: ModelRequest): Observable<ModelEvent>
}

/** Defaults of the adapters. */
export const MODEL_DEFAULTS = {
  anthropicBaseUrl: 'https://api.anthropic.com',
  anthropicVersion: '2023-06-01',
  openaiBaseUrl: 'https://api.openai.com/v1',
  /** Anthropic requires `max_tokens`; this is sent when a request sets none. */
  maxTokens: 4096,
} as const

/** Options of {@link anthropicModel}. */
export interface AnthropicModelOptions {
  apiKey: string
  /** For example `'claude-sonnet-4-5'`. */
  model: string
  /** Default `MODEL_DEFAULTS.anthropicBaseUrl`; the adapter posts to `${baseUrl}/v1/messages`. */
  baseUrl?: string
  /** Sent when a request sets none; default `MODEL_DEFAULTS.maxTokens`. */
  maxTokens?: number
  /** More headers (`anthropic-beta`, a proxy's own). */
  headers?: Record<string, string>
  /** Default `globalThis.fetch`. */
  fetch?: typeof globalThis.fetch
}

/**
 * An adapter for the Anthropic Messages API: `POST /v1/messages` with `x-api-key` and
 * `anthropic-version: 2023-06-01`, streamed (`stream: true`).
 * @example
 * const model = anthropicModel({ apiKey: process.env.ANTHROPIC_API_KEY!, model: 'claude-sonnet-4-5' })
 * model.request({ messages: [{ role: 'user', content: [{ type: 'text', text: 'Hi' }] }] }).subscribe(console.log)
 * @see openaiModel
 */
export function anthropicModel(options: AnthropicModelOptions): ModelAdapter {
  const { apiKey, model } = options
  const baseUrl = trimSlash(options.baseUrl ?? MODEL_DEFAULTS.anthropicBaseUrl)
  const maxTokens = options.maxTokens ?? MODEL_DEFAULTS.maxTokens
  return {
    provider: 'anthropic',
    model,
    request: request => streamModel({
      provider: 'anthropic',
      apiKey,
      fetch: options.fetch,
      url: `${baseUrl}/v1/messages`,
      headers: {
        ...options.headers,
        'content-type': 'application/json',
        accept: 'text/event-stream',
        'x-api-key': apiKey,
        'anthropic-version': MODEL_DEFAULTS.anthropicVersion,
      },
      body: anthropicRequestBody(request, { model, maxTokens, stream: true }),
      assembler: createAnthropicStreamAssembler(),
    }),
  }
}

/** Options of {@link openaiModel}. */
export interface OpenAiModelOptions {
  /** Sent as `Authorization: Bearer`; leave out for a local server that takes none. */
  apiKey?: string
  /** For example `'gpt-4.1'`, or a local server's model name. */
  model: string
  /** Default `MODEL_DEFAULTS.openaiBaseUrl`; the adapter posts to `${baseUrl}/chat/completions`. */
  baseUrl?: string
  /** Sent when a request sets none; default: none sent. */
  maxTokens?: number
  /** How to send it: `max_completion_tokens` (default) or `max_tokens` (for older compatible servers). */
  maxTokensField?: 'max_completion_tokens' | 'max_tokens'
  /** Ask for token usage (`stream_options.include_usage`); default true. Turn off for a server that rejects it. */
  includeUsage?: boolean
  /** More headers (`OpenAI-Organization`, a proxy's own). */
  headers?: Record<string, string>
  /** Default `globalThis.fetch`. */
  fetch?: typeof globalThis.fetch
}

/**
 * An adapter for OpenAI Chat Completions and compatible servers: `POST ${baseUrl}/chat/completions`,
 * streamed (`stream: true`), tool calls assembled from their fragments.
 * @example
 * const local = openaiModel({ baseUrl: 'http://127.0.0.1:11434/v1', model: 'qwen3' })
 * @see anthropicModel
 */
export function openaiModel(options: OpenAiModelOptions): ModelAdapter {
  const { apiKey, model } = options
  const baseUrl = trimSlash(options.baseUrl ?? MODEL_DEFAULTS.openaiBaseUrl)
  return {
    provider: 'openai',
    model,
    request: request => streamModel({
      provider: 'openai',
      apiKey,
      fetch: options.fetch,
      url: `${baseUrl}/chat/completions`,
      headers: {
        ...options.headers,
        'content-type': 'application/json',
        accept: 'text/event-stream',
        ...(apiKey !== undefined && apiKey !== '' ? { authorization: `Bearer ${apiKey}` } : undefined),
      },
      body: openaiRequestBody(request, { model, maxTokens: options.maxTokens, maxTokensField: options.maxTokensField, stream: true, includeUsage: options.includeUsage }),
      assembler: createOpenAiStreamAssembler(),
    }),
  }
}

/** Options of {@link samplingViaModel}. */
export type SamplingViaModelOptions = SamplingRequestOptions

/**
 * A sampling handler (`ClientOptions.sampling`) that answers each `sampling/createMessage` with one
 * request to `model`: the server's messages, system prompt, `maxTokens` (capped by
 * `maxTokensLimit`), temperature, stop sequences and tools; the answer as a `CreateMessageResult`
 * (role assistant, the text, the model's name, `endTurn`/`maxTokens`/`stopSequence`/`toolUse`).
 * The handler's Observable is cold: unsubscribing (the request cancelled) aborts the model request.
 * @example
 * const client = await connect(transport, { sampling: samplingViaModel(model, { maxTokensLimit: 1024 }) })
 */
export function samplingViaModel(model: ModelAdapter, options: SamplingViaModelOptions = {}): (params: CreateMessageParams) => Observable<CreateMessageResult> {
  return params => lastMessage(model.request(samplingRequest(params, options)), model.provider).pipe(map(samplingResult))
}

/** The `message` event of a model answer (an error if the stream completed without one). */
export function lastMessage(events: Observable<ModelEvent>, provider = 'model'): Observable<ModelMessageEvent> {
  return new Observable<ModelMessageEvent>(subscriber => {
    // The final event, once it came.
    let last: ModelMessageEvent | undefined
    return events.subscribe({
      next: event => { if (event.type === 'message') last = event },
      error: error => subscriber.error(error),
      complete: () => {
        if (last === undefined) subscriber.error(new ModelStreamError(provider, 'the answer ended without a message'))
        else { subscriber.next(last); subscriber.complete() }
      },
    })
  })
}

interface StreamAssembler {
  push(event: SseEvent): ModelEvent[]
  end?(): ModelEvent[]
  readonly isDone: boolean
}

interface StreamRequest {
  provider: string
  apiKey: string | undefined
  fetch: typeof globalThis.fetch | undefined
  url: string
  headers: Record<string, string>
  body: Record<string, unknown>
  assembler: StreamAssembler
}

/** POSTs the body, checks the status, and feeds the SSE stream to the assembler; unsubscribing aborts. */
function streamModel(request: StreamRequest): Observable<ModelEvent> {
  const { provider, apiKey, assembler } = request
  return new Observable<ModelEvent>(subscriber => {
    const controller = new AbortController()
    const run = async () => {
      const fetchFn = request.fetch ?? globalThis.fetch
      let response: Response
      try {
        response = await fetchFn(request.url, { method: 'POST', headers: request.headers, body: JSON.stringify(request.body), signal: controller.signal })
      } catch (cause) {
        throw new ModelStreamError(provider, `request failed: ${redact(String((cause as Error)?.message ?? cause), apiKey)}`, { cause })
      }
      if (!response.ok) {
        const text = await response.text().catch(() => '')
        const retryAfterMs = parseRetryAfter(response.headers.get('retry-after'))
        throw new ModelHttpError(provider, response.status, redact(text.slice(0, 2000), apiKey), retryAfterMs !== undefined ? { retryAfterMs } : undefined)
      }
      if (response.body === null) throw new ModelStreamError(provider, 'the response has no body')
      const parser = createSseParser(event => { for (const out of assembler.push(event)) subscriber.next(out) })
      const reader = response.body.pipeThrough(new TextDecoderStream()).getReader()
      try {
        while (!assembler.isDone) {
          const { done, value } = await reader.read()
          if (done) break
          parser.write(value)
        }
        // A last event the server did not end with a blank line.
        if (!assembler.isDone) parser.write('\n\n')
      } finally {
        reader.cancel().catch(() => {})
      }
      if (!assembler.isDone) for (const out of assembler.end?.() ?? []) subscriber.next(out)
      if (!assembler.isDone) throw new ModelStreamError(provider, 'the stream ended before the answer was complete')
      subscriber.complete()
    }
    run().catch(error => {
      // After unsubscribe the abort surfaces here; nobody listens any more.
      if (!controller.signal.aborted) subscriber.error(error)
    })
    return () => controller.abort()
  })
}

function trimSlash(url: string): string {
  return url.replace(/\/+$/, '')
}
