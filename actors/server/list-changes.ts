/**
 * A server's list changes on their way to its sessions: the changes of one microtask go out as
 * one `list_changed` event per list, and with `ServerOptions.listVisibility` each session hears of
 * a change only when what its principal sees of that list changed (the views, list-views.ts, read
 * the registries through this file's hook).
 *
 * ```
 * server.changed(kind) ─> pending kinds ─(end of microtask)─> emit list_changed per kind
 * list_changed event ─> per session: views? (its view changed ? tell : nothing) : tell
 * ```
 */
import type { JsonObject } from '../../lib/jsonrpc/message.ts'
import type { Principal } from '../../lib/auth.ts'
import type { ServerEvent } from '../../lib/events.ts'
import { ListViews, type ListVisibility } from './list-views.ts'
import type { ListKind, RegistriesView } from './registry.ts'

/**
 * The list changes of one server. `add` batches a change until the end of the microtask (then
 * `emit` gets one `list_changed` per list changed); `tells` decides per session whether it hears
 * of one. `views` is undefined without a visibility: every session hears of every change.
 */
export class ListChanges {
  /** With `listVisibility`: what each session and listen stream was last told of its lists. */
  readonly views: ListViews | undefined
  /** Lists that changed since the last flush; list_changed goes out once per microtask. */
  readonly #pending = new Set<ListKind>()

  constructor(readonly registries: RegistriesView, visibility: ListVisibility | undefined, readonly emit: (event: ServerEvent) => void) {
    this.views = visibility === undefined ? undefined : new ListViews(visibility, kind => this.#listed(kind))
  }

  /** Marks `kind` changed: its list_changed goes out at the end of the current microtask, once. */
  add(kind: ListKind): void {
    if (this.#pending.size === 0) queueMicrotask(() => this.#flush())
    this.#pending.add(kind)
  }

  /** What the sessions told of one change share: one view per principal, whatever the number of its sessions (undefined without views). */
  memo(): Map<string, string> | undefined {
    return this.views === undefined ? undefined : new Map<string, string>()
  }

  /** True when `holder` (a session) is to hear of a change of `kind`: always without views, else when its principal's view changed. */
  tells(holder: object, principal: Principal | undefined, kind: ListKind, memo: Map<string, string> | undefined): boolean {
    return this.views === undefined || this.views.changed(holder, principal, kind, memo)
  }

  /** The enabled items of a list, in their wire form (templates with the resources). */
  *#listed(kind: ListKind): Iterable<JsonObject> {
    const { tools, resources, templates, prompts } = this.registries
    const entries = kind === 'tools' ? tools.values() : kind === 'prompts' ? prompts.values() : resources.values()
    for (const entry of entries) if (entry.isEnabled) yield entry.wire as unknown as JsonObject
    if (kind === 'resources') for (const entry of templates.values()) if (entry.isEnabled) yield entry.wire as unknown as JsonObject
  }

  #flush(): void {
    const kinds = [...this.#pending]
    this.#pending.clear()
    for (const kind of kinds) this.emit({ type: 'list_changed', kind })
  }
}
