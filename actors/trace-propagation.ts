/**
 * The trace context MCP carries in `_meta` (`traceparent`, `tracestate`, `baggage`, unprefixed, as
 * MCP 2026-07-28 and SEP-414 reserve them), read into and written from OpenTelemetry contexts for
 * telemetry (actors/telemetry.ts). W3C Trace Context and Baggage are read and written here,
 * whatever propagator the application registered: they are the only ones MCP names.
 */
import type * as OtelApi from '@opentelemetry/api'
import type { Meta } from '../lib/jsonrpc/message.ts'
import { traceContextOf } from './context.ts'

type Api = typeof OtelApi

/**
 * The caller's context from a request's `_meta` over `base` (a remote span context, and the
 * baggage), or undefined when it carries no valid `traceparent`.
 */
export function extract(api: Api, base: OtelApi.Context, meta: Meta | undefined): OtelApi.Context | undefined {
  // Checked as a handler's ctx.trace is: a malformed traceparent is none, a malformed tracestate or baggage left out.
  const trace = traceContextOf(meta)
  if (trace === undefined) return undefined
  const [, traceId, spanId, flags] = trace.traceparent.split('-')
  const spanContext: OtelApi.SpanContext = {
    traceId: traceId!, spanId: spanId!, traceFlags: Number.parseInt(flags!, 16) & 1, isRemote: true,
    traceState: trace.tracestate === undefined || trace.tracestate === '' ? undefined : api.createTraceState(trace.tracestate),
  }
  const context = api.trace.setSpanContext(base, spanContext)
  const baggage = trace.baggage === undefined ? undefined : parseBaggage(api, trace.baggage)
  return baggage === undefined ? context : api.propagation.setBaggage(context, baggage)
}

/** The `_meta` entries that carry `context` on: its span's `traceparent` and `tracestate`, and its baggage. */
export function inject(api: Api, context: OtelApi.Context): Meta | undefined {
  const spanContext = api.trace.getSpanContext(context)
  // A no-op tracer (no SDK registered) makes spans with no valid context: nothing to carry.
  if (spanContext === undefined || !api.isSpanContextValid(spanContext)) return undefined
  const meta: Meta = { traceparent: `00-${spanContext.traceId}-${spanContext.spanId}-${(spanContext.traceFlags & 0xff).toString(16).padStart(2, '0')}` }
  const tracestate = spanContext.traceState?.serialize()
  if (tracestate) meta.tracestate = tracestate
  const baggage = api.propagation.getBaggage(context)
  const entries = baggage?.getAllEntries() ?? []
  if (entries.length > 0) meta.baggage = entries.map(([key, entry]) => `${encodeURIComponent(key)}=${encodeURIComponent(entry.value)}`).join(',')
  return meta
}

/** W3C Baggage (`key=value,key2=value2;property`): its entries, properties dropped; undefined when none. */
function parseBaggage(api: Api, text: string): OtelApi.Baggage | undefined {
  const entries: Record<string, OtelApi.BaggageEntry> = {}
  let count = 0
  // W3C Baggage bounds: 8192 bytes and 180 members; what is past them is left out.
  for (const member of text.slice(0, 8192).split(',')) {
    if (count >= 180) break
    const [pair] = member.split(';')
    const at = pair!.indexOf('=')
    if (at <= 0) continue
    try {
      const key = decodeURIComponent(pair!.slice(0, at).trim())
      const value = decodeURIComponent(pair!.slice(at + 1).trim())
      if (key === '') continue
      entries[key] = { value }
      count++
    } catch { /* a member that is not valid percent-encoding is left out */ }
  }
  return count === 0 ? undefined : api.propagation.createBaggage(entries)
}
