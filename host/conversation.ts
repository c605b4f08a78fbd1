/**
 * The tool-use loop between a model and the host's tools: ask the model with the history and the
 * host's current tools, run the tools it calls, feed the results back, until it answers without
 * calling a tool or `maxRounds` model requests were made.
 *
 * ```
 *  history + prompt ──► model ──► text / tool calls ──► (approve?) ──► host.callTool ──► results ─┐
 *          ▲                         │ no tool calls                                              │
 *          │                         ▼                                                            │
 *          │                   message, done                                                      │
 *          └─────────────────────────────────── next round (at most maxRounds) ◄──────────────────┘
 * ```
 */
import { isModelVisible } from '../lib/apps.ts'
import { Observable } from '../lib/rx.ts'
import {
  errorResult, invalidArgumentsResult, messageToolCalls,
  type ModelContent, type ModelEvent, type ModelMessage, type ModelMessageEvent, type ModelToolCall, type ModelToolResult,
  type ModelUsage, type StopReason,
} from '../lib/llm/messages.ts'
import { ModelStreamError } from '../lib/llm/errors.ts'
import type { CallToolResult } from '../lib/schema/types.ts'
import type { ModelAdapter } from './model.ts'
import type { HostTool, HostView } from './view.ts'

/** Defaults of {@link converse}. */
export const CONVERSATION_DEFAULTS = { maxRounds: 10 } as const

/** A tool call awaiting the user's approval. */
export interface ToolCallRequest {
  /** The model's id for the call. */
  id: string
  /** The tool's namespaced name. */
  name: string
  arguments: Record<string, unknown>
  /** The tool in the host's view. */
  tool: HostTool
}

/** The user's decision on a tool call. */
export type ToolCallDecision = 'allow' | 'deny'

/** Options of {@link converse}. */
export interface ConverseOptions {
  /** The user's new message (appended to `history`, into its last message when that is the user's). */
  prompt?: string | ModelContent[]
  /** The conversation so far: the `history` of a previous turn's `done` event. */
  history?: readonly ModelMessage[]
  /** The system prompt. */
  system?: string
  /** Model requests at most; default `CONVERSATION_DEFAULTS.maxRounds` (10). */
  maxRounds?: number
  /** `maxTokens` of each model request (else the adapter's). */
  maxTokens?: number
  temperature?: number
  /** Which of the host's tools the model sees (all by default). */
  tools?: (tools: readonly HostTool[]) => readonly HostTool[]
  /**
   * Human in the loop: asked before each call, one at a time. A denied call is not made; the model
   * gets an error result saying it was denied by the user. A rejection fails the conversation.
   * `signal` aborts when the conversation is cancelled (close the prompt then).
   */
  approveToolCall?: (call: ToolCallRequest, context: { signal: AbortSignal }) => Promise<ToolCallDecision>
}

/** Why a conversation turn ended: the model's last stop reason, or `maxRounds`. */
export type ConversationStopReason = StopReason | 'maxRounds'

/** What {@link converse} emits. */
export type ConversationEvent =
  /** Text of the model's answer as it streams. */
  | { type: 'text'; delta: string }
  /** The model called a tool (arguments complete; `{}` when they were invalid, see the result). */
  | { type: 'tool-call'; id: string; name: string; arguments: Record<string, unknown> }
  /** A running tool reported progress. */
  | { type: 'tool-progress'; id: string; progress: number; total?: number; message?: string }
  /** A tool call's result (also for calls denied, invalid, failed or not run), as fed back to the model. */
  | { type: 'tool-result'; id: string; name: string; result: CallToolResult; isError: boolean }
  /** `maxRounds` model requests were made and the last still called tools (they were not run). */
  | { type: 'max-rounds'; rounds: number }
  /** The model's last message of this turn. */
  | { type: 'message'; message: ModelMessage }
  /** The end: the whole history (pass it as `history` to continue), why it ended, rounds and tokens used. */
  | { type: 'done'; history: ModelMessage[]; stopReason: ConversationStopReason; rounds: number; usage: ModelUsage }

/**
 * Runs one conversation turn between `model` and the host's tools. Cold: subscribing starts it.
 * Emits `text` deltas, then for each tool call `tool-call`, any `tool-progress` and `tool-result`;
 * repeats while the model calls tools; ends with `message` and `done`, then completes. Tool calls of
 * a round run one after another, each at the host with an AbortSignal. A call that fails, names a
 * tool that was not offered, has arguments that are not a JSON object, or is denied becomes an
 * error result the model sees (it can correct itself), not an error of the conversation. When the model still calls tools in round `maxRounds`,
 * they are answered with error results (not run), then `max-rounds`, `message` and `done`
 * (`stopReason: 'maxRounds'`) follow. Fails with the model's error (`ModelHttpError`,
 * `ModelStreamError`). Unsubscribing aborts the model request and the tool calls in flight.
 * @example
 * converse(host, anthropicModel({ apiKey, model: 'claude-sonnet-4-5' }), { prompt: 'What is in /tmp?' })
 *   .subscribe(event => { if (event.type === 'text') process.stdout.write(event.delta) })
 * @see ModelAdapter
 */
export function converse(host: HostView, model: ModelAdapter, options: ConverseOptions = {}): Observable<ConversationEvent> {
  const maxRounds = options.maxRounds ?? CONVERSATION_DEFAULTS.maxRounds
  if (!Number.isInteger(maxRounds) || maxRounds < 1) throw new RangeError(`maxRounds must be a positive integer, not ${maxRounds}`)
  return new Observable<ConversationEvent>(subscriber => {
    // Aborted on unsubscribe: cancels the model request and the tool calls in flight.
    const controller = new AbortController()
    const { signal } = controller
    // The conversation so far, grown by each round; emitted with `done`.
    const history: ModelMessage[] = [...(options.history ?? [])]
    if (options.prompt !== undefined) appendUser(history, typeof options.prompt === 'string' ? [{ type: 'text', text: options.prompt }] : options.prompt)
    // Tokens of every round, added up.
    const usage: ModelUsage = {}

    const runCall = async (call: ModelToolCall, tools: readonly HostTool[]): Promise<CallToolResult> => {
      if (call.invalidArguments !== undefined) return invalidArgumentsResult(call)
      // The model may call only what it was offered (a made-up name, or one `options.tools` left out).
      const tool = tools.find(candidate => candidate.name === call.name)
      if (tool === undefined) return errorResult(`Tool ${call.name} was not called: there is no such tool.`)
      if (options.approveToolCall !== undefined) {
        const decision = await options.approveToolCall({ id: call.id, name: call.name, arguments: call.arguments, tool }, { signal })
        if (decision !== 'allow') return errorResult(`Tool ${call.name} was not called: denied by the user.`)
      }
      signal.throwIfAborted()
      try {
        return await host.callTool(call.name, call.arguments, {
          signal,
          // Only the progress fields: the event a client hands over carries a `type` of its own.
          onProgress: ({ progress, total, message }) => {
            if (!signal.aborted) subscriber.next({ type: 'tool-progress', id: call.id, progress, ...(total === undefined ? {} : { total }), ...(message === undefined ? {} : { message }) })
          },
        })
      } catch (error) {
        if (signal.aborted) throw error
        return errorResult(`Tool ${call.name} failed: ${(error as Error)?.message ?? String(error)}`)
      }
    }

    const run = async () => {
      for (let round = 1; ; round++) {
        // MCP Apps: a tool whose visibility leaves out `model` is for its view only, never offered to the model.
        const all = host.currentTools().filter(tool => isModelVisible(tool.tool))
        const tools = options.tools ? options.tools(all) : all
        const answer = await requestRound(model, {
          messages: [...history],
          tools,
          ...(options.system !== undefined ? { system: options.system } : undefined),
          ...(options.maxTokens !== undefined ? { maxTokens: options.maxTokens } : undefined),
          ...(options.temperature !== undefined ? { temperature: options.temperature } : undefined),
        }, signal, event => {
          if (event.type === 'text') subscriber.next({ type: 'text', delta: event.delta })
          else if (event.type === 'tool-call') subscriber.next({ type: 'tool-call', id: event.call.id, name: event.call.name, arguments: event.call.arguments })
        })
        addUsage(usage, answer.usage)
        history.push(answer.message)
        const calls = messageToolCalls(answer.message)
        const end = (stopReason: ConversationStopReason) => {
          subscriber.next({ type: 'message', message: answer.message })
          subscriber.next({ type: 'done', history: [...history], stopReason, rounds: round, usage: { ...usage } })
          subscriber.complete()
        }
        if (calls.length === 0) return end(answer.stopReason)
        const isLastRound = round >= maxRounds
        // Every call gets a result, so the history stays valid for a next turn.
        const results: ModelToolResult[] = []
        for (const call of calls) {
          const result = isLastRound
            ? errorResult(`Tool ${call.name} was not called: the limit of ${maxRounds} model requests was reached.`)
            : await runCall(call, tools)
          signal.throwIfAborted()
          subscriber.next({ type: 'tool-result', id: call.id, name: call.name, result, isError: result.isError === true })
          results.push({ type: 'tool-result', id: call.id, name: call.name, result })
        }
        history.push({ role: 'user', content: results })
        if (isLastRound) {
          subscriber.next({ type: 'max-rounds', rounds: round })
          return end('maxRounds')
        }
      }
    }
    run().catch(error => { if (!signal.aborted) subscriber.error(error) })
    return () => controller.abort()
  })
}

/** Appends user content, into the last message when it is the user's (after tool results of a turn cut short). */
function appendUser(history: ModelMessage[], content: ModelContent[]): void {
  const last = history.at(-1)
  if (last?.role === 'user') history[history.length - 1] = { role: 'user', content: [...last.content, ...content] }
  else history.push({ role: 'user', content })
}

/** One model request as a Promise of its final message; other events go to `onEvent`; aborting unsubscribes. */
function requestRound(model: ModelAdapter, request: Parameters<ModelAdapter['request']>[0], signal: AbortSignal, onEvent: (event: ModelEvent) => void): Promise<ModelMessageEvent> {
  signal.throwIfAborted()
  return new Promise((resolve, reject) => {
    // The final event, once it came.
    let last: ModelMessageEvent | undefined
    const onAbort = () => { subscription.unsubscribe(); reject(signal.reason) }
    const settle = () => signal.removeEventListener('abort', onAbort)
    const subscription = model.request(request).subscribe({
      next: event => { if (event.type === 'message') last = event; else onEvent(event) },
      error: error => { settle(); reject(error) },
      complete: () => {
        settle()
        if (last !== undefined) resolve(last)
        else reject(new ModelStreamError(model.provider, 'the answer ended without a message'))
      },
    })
    if (!subscription.closed) signal.addEventListener('abort', onAbort, { once: true })
  })
}

function addUsage(total: ModelUsage, more: ModelUsage): void {
  if (more.inputTokens !== undefined) total.inputTokens = (total.inputTokens ?? 0) + more.inputTokens
  if (more.outputTokens !== undefined) total.outputTokens = (total.outputTokens ?? 0) + more.outputTokens
}
