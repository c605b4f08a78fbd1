/**
 * The bounds of the host's aggregated view: what one server may put into it (how many tools,
 * resources and prompts, how long a description, how large a definition and a whole list), and how
 * often its list_changed notifications make the host list again. A server past a bound is cut to
 * fit and the host is told; nothing a server sends can grow the view, or the gateway that serves
 * it, without limit.
 */
import { startWith, switchMap, throttleTime, type Observable, type SchedulerLike } from '../lib/rx.ts'

/** Bounds of the aggregated view, per server (see {@link HOST_LIMIT_DEFAULTS}). */
export interface HostLimits {
  /** Tools kept per server; the rest are left out (default 1,000). */
  maxToolsPerServer: number
  /** Resources kept per server (default 1,000). */
  maxResourcesPerServer: number
  /** Prompts kept per server (default 1,000). */
  maxPromptsPerServer: number
  /** Characters of a `description` kept; a longer one is cut and ends in `…` (default 8,192). */
  maxDescriptionLength: number
  /** Bytes of one definition as JSON (after the description is cut); a larger one is left out (default 64 KiB). */
  maxDefinitionBytes: number
  /** Bytes of one server's list of one kind as JSON; definitions past it are left out (default 8 MiB). */
  maxListBytes: number
  /**
   * Ms between two listings of one kind of one server: a storm of list_changed notifications is
   * one listing at once and one at the end of each interval while it lasts (default 1,000).
   */
  listChangedIntervalMs: number
}

/** Defaults of {@link HostLimits}. */
export const HOST_LIMIT_DEFAULTS: Readonly<HostLimits> = {
  maxToolsPerServer: 1000,
  maxResourcesPerServer: 1000,
  maxPromptsPerServer: 1000,
  maxDescriptionLength: 8192,
  maxDefinitionBytes: 64 * 1024,
  maxListBytes: 8 * 1024 * 1024,
  listChangedIntervalMs: 1000,
}

/** The kinds of list a server offers. */
export type OfferKind = 'tools' | 'resources' | 'prompts'

/** The most items of `kind` one server may offer under `limits`. */
export function maxItems(kind: OfferKind, limits: HostLimits): number {
  return kind === 'tools' ? limits.maxToolsPerServer : kind === 'resources' ? limits.maxResourcesPerServer : limits.maxPromptsPerServer
}

/** Individual problems named in one warning; the rest are counted. */
const NAMED_PROBLEMS = 10

/**
 * `items` (a server's list of `kind`, at most one past the count bound) cut to fit `limits`:
 * descriptions shortened, definitions too large left out, the list stopped at its count and byte
 * bounds. Returns the kept items and one warning (undefined when nothing was cut).
 */
export function boundList<T extends { readonly description?: string }>(kind: OfferKind, items: readonly T[], limits: HostLimits): { items: T[]; warning: string | undefined } {
  const problems: string[] = []
  let unnamed = 0
  const problem = (text: string) => { if (problems.length < NAMED_PROBLEMS) problems.push(text); else unnamed++ }
  const max = maxItems(kind, limits)
  const kept: T[] = []
  let bytes = 0
  for (const [index, original] of items.entries()) {
    if (index >= max) { problem(`more than ${max} offered: the first ${max} are kept`); break }
    let item = original
    const description = item.description
    if (typeof description === 'string' && description.length > limits.maxDescriptionLength) {
      item = { ...item, description: `${description.slice(0, limits.maxDescriptionLength - 1)}…` }
      problem(`${nameOf(kind, item)}: description of ${description.length} characters cut to ${limits.maxDescriptionLength}`)
    }
    const size = Buffer.byteLength(JSON.stringify(item))
    if (size > limits.maxDefinitionBytes) { problem(`${nameOf(kind, item)}: left out, its definition is ${size} bytes (limit ${limits.maxDefinitionBytes})`); continue }
    if (bytes + size > limits.maxListBytes) { problem(`the list passes ${limits.maxListBytes} bytes: ${items.length - index} left out from ${nameOf(kind, item)} on`); break }
    bytes += size
    kept.push(item)
  }
  if (problems.length === 0) return { items: kept, warning: undefined }
  return { items: kept, warning: `${kind} cut to fit the host's limits: ${problems.join('; ')}${unnamed > 0 ? `; and ${unnamed} more` : ''}` }
}

/** What names an item in a warning: a resource's URI, a tool's or prompt's name, at most 80 characters. */
function nameOf(kind: OfferKind, item: { readonly description?: string }): string {
  const { name, uri } = item as { name?: unknown; uri?: unknown }
  const key = kind === 'resources' ? uri : name
  const label = typeof key === 'string' ? key : '(unnamed)'
  return JSON.stringify(label.length > 80 ? `${label.slice(0, 79)}…` : label)
}

/**
 * The newest listing, kept current: `list()` once now and again on `changes`, at most once per
 * `intervalMs` on `scheduler` (a storm of changes is one listing at once and one at the end of each
 * interval while it lasts), and a listing under way is dropped (unsubscribed: its request
 * cancelled) when a newer one starts, so the newest list always wins and a stale one is never
 * emitted. Emits what each listing gives; completes when `changes` completes and the last listing
 * has; unsubscribing stops it.
 */
export function newestListing<T>(changes: Observable<unknown>, list: () => Observable<T>, intervalMs: number, scheduler: SchedulerLike): Observable<T> {
  return changes.pipe(startWith(undefined), throttleTime(intervalMs, scheduler, { leading: true, trailing: true }), switchMap(list))
}
