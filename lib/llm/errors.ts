/**
 * Local errors of the model adapters. They never cross the MCP wire, and never carry the API key:
 * each message and body excerpt is redacted before the error is made.
 */

/** String codes of the model errors. */
export const ModelErrorCode = {
  Http: 'RXMCP_ERR_MODEL_HTTP',
  Stream: 'RXMCP_ERR_MODEL_STREAM',
} as const

/** One of the model error codes. */
export type ModelErrorCode = (typeof ModelErrorCode)[keyof typeof ModelErrorCode]

/** The model API answered with an HTTP error status (bad key, rate limit, overload, bad request). */
export class ModelHttpError extends Error {
  override name = 'ModelHttpError'
  readonly code = ModelErrorCode.Http
  constructor(
    /** Which API: `'anthropic'` or `'openai'`. */
    readonly provider: string,
    /** The HTTP status. */
    readonly status: number,
    /** The start of the response body (at most 2,000 characters), redacted. */
    readonly body: string,
    options?: { cause?: unknown; retryAfterMs?: number },
  ) {
    super(`${provider} API answered HTTP ${status}${body ? `: ${body.slice(0, 300)}` : ''}`, options)
    if (options?.retryAfterMs !== undefined) this.retryAfterMs = options.retryAfterMs
  }

  /** How long the server asked to wait before retrying (its `retry-after` header), in ms. */
  readonly retryAfterMs?: number

  /** Whether retrying later may succeed (408, 409, 429, 5xx; Anthropic's 529 "overloaded" included). */
  get isRetryable(): boolean {
    return this.status === 408 || this.status === 409 || this.status === 429 || this.status >= 500
  }
}

/** The model's stream failed: an `error` event, malformed data, or an end before the answer was complete. */
export class ModelStreamError extends Error {
  override name = 'ModelStreamError'
  readonly code = ModelErrorCode.Stream
  constructor(
    readonly provider: string,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(`${provider} stream: ${message}`, options)
  }
}

/** A `retry-after` header (seconds, or an HTTP date) in ms from `now`; undefined when absent or unreadable. */
export function parseRetryAfter(value: string | null | undefined, now = Date.now()): number | undefined {
  if (value === null || value === undefined || value.trim() === '') return undefined
  if (/^\d+(\.\d+)?$/.test(value.trim())) return Math.round(Number(value) * 1000)
  const date = Date.parse(value)
  return Number.isNaN(date) ? undefined : Math.max(0, date - now)
}

/** Replaces every occurrence of `secret` in `text` (a key a server echoed back, for instance). */
export function redact(text: string, secret: string | undefined): string {
  if (secret === undefined || secret.length < 4) return text
  return text.split(secret).join('[redacted]')
}
