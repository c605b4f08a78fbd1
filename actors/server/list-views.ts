/**
 * list_changed per principal: with `ServerOptions.listVisibility`, a legacy session (and a modern
 * `subscriptions/listen` stream) is told `notifications/<kind>/list_changed` only when what ITS
 * principal may see of that list changed, not on every change of the server's registries.
 *
 *   session initialized ──> remember(view of each list for its principal)
 *   registry change ──> for each holder: view now == view remembered ? nothing : list_changed, remember
 *
 * A view is the visible items' wire forms (a tool's name, description, schemas, ...), in registry
 * order, as one string: an item appearing, leaving or changing its definition changes it. Views are
 * computed once per principal and change (a memo), so N sessions of one principal cost one view.
 */
import type { JsonObject } from '../../lib/jsonrpc/message.ts'
import { principalKey, type Principal } from '../../lib/auth.ts'
import type { ListKind } from './registry.ts'

/**
 * What a principal may see: called once per principal and list change with the principal, it
 * answers per item of a list (`tools`: a Tool; `prompts`: a Prompt; `resources`: a Resource or a
 * ResourceTemplate, told apart by `uri` / `uriTemplate`). `permissionVisibility(policy)` gives the
 * one the `permissions` middleware filters listings by.
 */
export type ListVisibility = (principal: Principal | undefined) => (kind: ListKind, item: JsonObject) => boolean

/** The views each holder (a session, a listen stream) was last told of. */
export class ListViews {
  /** Per holder, the view of each list it was last told of (or saw when it started). */
  readonly #told = new WeakMap<object, Map<ListKind, string>>()

  constructor(readonly visibility: ListVisibility, readonly items: (kind: ListKind) => Iterable<JsonObject>) {}

  /** Remembers what `holder` sees now of every list (its baseline). */
  remember(holder: object, principal: Principal | undefined): void {
    const may = this.visibility(principal)
    this.#told.set(holder, new Map((['tools', 'resources', 'prompts'] as const).map(kind => [kind, this.#view(kind, may)])))
  }

  /**
   * True when what `holder`'s principal sees of `kind` differs from what it was last told of (and
   * then remembers the new view); true as well for a holder without a baseline (a spurious
   * list_changed costs a listing; a missed one leaves a stale list). `memo` shares views among the
   * holders of one change.
   */
  changed(holder: object, principal: Principal | undefined, kind: ListKind, memo?: Map<string, string>): boolean {
    const key = `${kind}\u0000${principalKey(principal)}`
    let view = memo?.get(key)
    if (view === undefined) {
      view = this.#view(kind, this.visibility(principal))
      memo?.set(key, view)
    }
    let told = this.#told.get(holder)
    if (told === undefined) this.#told.set(holder, told = new Map())
    const before = told.get(kind)
    told.set(kind, view)
    return before !== view
  }

  #view(kind: ListKind, may: (kind: ListKind, item: JsonObject) => boolean): string {
    const visible: JsonObject[] = []
    for (const item of this.items(kind)) if (may(kind, item)) visible.push(item)
    return JSON.stringify(visible)
  }
}
