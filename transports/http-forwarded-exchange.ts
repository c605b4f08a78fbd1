/**
 * The exchanges the cluster's router moves between instances (http-cluster.ts): a forwarded one,
 * served by the owner as its own, with what it answers batched back to the front; one whose body
 * the front read already; and the wire shape of both directions.
 */
import type { Principal } from '../lib/auth.ts'
import { base64url, bytesOfBase64url } from '../lib/base64url.ts'
import type { BodyResult, Exchange, RefusedIds, Sink } from './http-exchange.ts'
import { requestsOf } from './http-ids.ts'
import type { HeaderList } from './request-info.ts'
import { decodeJsonFrame } from '../lib/codec/json.ts'
import { StructureLimitError } from '../lib/jsonrpc/errors.ts'

/** What goes back to the front: reply, refuse, stream start, write, end; `m` (moved): the session was handed over, route the exchange again. */
export type Op = ['r' | 'f', number, Record<string, string>, string | undefined] | ['s', number, Record<string, string>, number] | ['w', string] | ['e'] | ['m']

export interface ForwardMessage {
  t: 'x'; k: string; f: string; m: string; p: string; q: string; h: Record<string, string>
  /** The body (text), or in base64url when it is not UTF-8; the principal; the client's resolved address. */
  b?: string; b64?: string; a?: Principal; r?: string
}

/**
 * An exchange forwarded by another instance, served here as a local one: what the listener
 * answers is sent back in batches (one message per tick per exchange), and the front's client
 * going away closes it.
 */
export class ForwardedExchange implements Exchange {
  /** Its `remoteAddress` is the client's as the front resolved it: taken as it is. */
  readonly isForwarded = true
  readonly method: string
  readonly pathname: string
  readonly search: string
  readonly remoteAddress: string | undefined
  readonly from: string
  principal: Principal | undefined
  readonly #headers: Record<string, string>
  readonly #body: Uint8Array
  #ops: Op[] | undefined
  /** The batches go one after the other (a retried one is not overtaken). */
  #sending: Promise<boolean> = Promise.resolve(true)
  #listeners: (() => void)[] = []
  #isClosed = false

  constructor(message: ForwardMessage, readonly post: (ops: Op[]) => Promise<boolean>, readonly onDone: () => void) {
    this.method = message.m
    this.pathname = message.p
    this.search = message.q
    this.remoteAddress = message.r
    this.from = message.f
    this.principal = message.a
    this.#headers = message.h
    this.#body = message.b64 !== undefined ? bytesOfBase64url(message.b64) ?? new Uint8Array(0) : new TextEncoder().encode(message.b ?? '')
  }

  /** Forwarded under their lower-case names (FORWARDED_HEADERS): looked up the same way, whatever the spelling. */
  header(name: string): string | null { return this.#headers[name.toLowerCase()] ?? null }
  headerList(): HeaderList { return this.#headers }
  body(): Promise<BodyResult> { return Promise.resolve({ type: 'body', body: this.#body }) }
  onClose(listener: () => void): void {
    if (this.#isClosed) queueMicrotask(listener)
    else this.#listeners.push(listener)
  }
  reply(status: number, headers: Record<string, string>, body?: string): void { this.#op(['r', status, headers, body]); this.#finish() }
  refuse(status: number, headers: Record<string, string>, body?: string): void { this.#op(['f', status, headers, body]); this.#finish() }
  stream(status: number, headers: Record<string, string>, highWaterMark: number): Sink {
    // The front holds the client's connection: the mark applies there.
    this.#op(['s', status, headers, highWaterMark])
    return {
      write: text => this.#op(['w', text]),
      end: () => { if (this.#isClosed) return; this.#op(['e']); this.#finish() },
    }
  }

  #op(op: Op): void {
    if (this.#isClosed) return
    if (this.#ops !== undefined) { this.#ops.push(op); return }
    this.#ops = [op]
    queueMicrotask(() => {
      const ops = this.#ops
      this.#ops = undefined
      if (ops !== undefined) this.#send(ops)
    })
  }

  /** Answered: nothing more goes to the front (a batch still queued is sent). */
  #finish(): void {
    if (this.#isClosed) return
    const ops = this.#ops
    this.#ops = undefined
    if (ops !== undefined) this.#send(ops)
    this.close()
  }

  #send(ops: Op[]): void {
    this.#sending = this.#sending.then(isOpen => isOpen && this.post(ops)).then(delivered => { if (!delivered) this.close(); return delivered })
  }

  /** The client (or the front it came through) went away, or the answer ended. */
  close(): void {
    if (this.#isClosed) return
    this.#isClosed = true
    this.onDone()
    for (const listener of this.#listeners.splice(0)) listener()
  }
}

/** An exchange whose body was read (to forward it) and is served here after all. */
export class ReadExchange implements Exchange {
  constructor(readonly inner: Exchange, readonly bytes: Uint8Array) {}
  get method(): string { return this.inner.method }
  get pathname(): string { return this.inner.pathname }
  get search(): string { return this.inner.search }
  get remoteAddress(): string | undefined { return this.inner.remoteAddress }
  get isForwarded(): boolean | undefined { return this.inner.isForwarded }
  get principal(): Principal | undefined { return this.inner.principal }
  set principal(principal: Principal | undefined) { this.inner.principal = principal }
  header(name: string): string | null { return this.inner.header(name) }
  headerList(): HeaderList { return this.inner.headerList() }
  body(): Promise<BodyResult> { return Promise.resolve({ type: 'body', body: this.bytes }) }
  onClose(listener: () => void): void { this.inner.onClose(listener) }
  reply(status: number, headers: Record<string, string>, body?: string): void { this.inner.reply(status, headers, body) }
  refuse(status: number, headers: Record<string, string>, body?: string): void { this.inner.refuse(status, headers, body) }
  stream(status: number, headers: Record<string, string>, highWaterMark: number): Sink { return this.inner.stream(status, headers, highWaterMark) }
}

const strictUtf8 = new TextDecoder('utf-8', { fatal: true })

/** The body as text when it is valid UTF-8 (else it travels as base64url, byte for byte). */
export function utf8(bytes: Uint8Array): string | undefined {
  try { return strictUtf8.decode(bytes) } catch { return undefined }
}

/**
 * The ids a relayed body's answer carries: one per request of a batch, else the request's own (null
 * when it has none). Decoded under the structure bounds like any body (client input: a body nested
 * deep costs seconds to parse), and one past them answers with the id read from its head.
 */
export function idsOf(body: Uint8Array | undefined): RefusedIds {
  if (body === undefined) return null
  const decoded = decodeJsonFrame(body, Infinity)
  if (decoded.type === 'invalid') return decoded.error instanceof StructureLimitError ? decoded.error.id ?? null : null
  const ids = requestsOf(decoded.message).ids
  return Array.isArray(decoded.message) ? ids : (ids[0] ?? null)
}
