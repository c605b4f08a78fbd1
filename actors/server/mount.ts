/**
 * A mounted source's entries in the mounting server's registries: written from each offer the
 * source makes (its list_changed followed), as forwarding entries that validate nothing and
 * compile no schema, and taken out again when the mount is removed or the source is gone.
 *
 * ```
 * source.offers ─> diff against what this mount wrote ─> registries (set / update / delete) ─> server.changed(kind)
 * source.logs   ─> the caller of the request a message was about (ctx.log), else server.log (each session at its own level)
 * ```
 *
 * Names: tools and prompts get `<prefix>__<name>` (the host's rule, lib/tool-names.ts); resources
 * and templates keep their URIs. A name or URI the server already has (its own, or an earlier
 * mount's) stays with its owner: the mount's entry is left out and reported.
 */
import { defer, from, mergeMap, type Observable, type Subscription } from '../../lib/rx.ts'
import { namespacedNames } from '../../lib/tool-names.ts'
import { uriTemplate } from '../../lib/uri-template.ts'
import type { LoggingLevel, Prompt, Resource, ResourceTemplate, Tool } from '../../lib/schema/types.ts'
import type { ServerContext } from './api.ts'
import type { Mount, Mountable, MountOffer, MountOptions } from './mountable.ts'
import type { ListKind, MountedRef, PromptEntry, ResourceEntry, TemplateEntry, ToolEntry } from './registry.ts'

/** What a mount needs of the server it writes into. */
export interface MountHost {
  readonly tools: Map<string, ToolEntry>
  readonly resources: Map<string, ResourceEntry>
  readonly templates: Map<string, TemplateEntry>
  readonly prompts: Map<string, PromptEntry>
  changed(kind: ListKind): void
  log(level: LoggingLevel, data: unknown, logger?: string): void
  report(error: unknown): void
  /** The mount's entries changed: resource URIs already subscribed may now have an owner to watch them. */
  mountsChanged(): void
}

/** What was written for one kind, by key: the entry, and its wire JSON (to see a change). */
type Written<E> = Map<string, { entry: E; json: string }>

/**
 * Mounts `source` into `host` under `prefix` (see the file's comment); `remove()` undoes it and
 * closes the source. Entries appear with the source's first offer.
 */
export function mountSource(host: MountHost, prefix: string, source: Mountable, options: MountOptions = {}): Mount {
  if (typeof prefix !== 'string') throw new TypeError('A mount prefix is a string ("" for no namespacing)')
  const skipped = options.onSkipped ?? ((kind, name, reason) => host.report(new Error(`mount ${JSON.stringify(prefix)}: ${kind} ${name} left out: ${reason}`)))
  const tools: Written<ToolEntry> = new Map()
  const resources: Written<ResourceEntry> = new Map()
  const templates: Written<TemplateEntry> = new Map()
  const prompts: Written<PromptEntry> = new Map()
  /** Names reported as left out already (reported once, not at every offer). */
  const reported = new Set<string>()
  const skip = (kind: 'tool' | 'resource' | 'template' | 'prompt', name: string, reason: string) => {
    if (reported.has(`${kind}:${name}`)) return
    reported.add(`${kind}:${name}`)
    skipped(kind, name, reason)
  }
  const names = (items: readonly { name: string }[]) => prefix === '' ? items.map(item => item.name)
    : namespacedNames(items.map(item => ({ server: prefix, name: item.name })))
  let isRemoved = false

  const apply = (offer: MountOffer) => {
    const ref = (original: string): MountedRef => ({ source, original, completions: offer.completions })
    const toolNames = names(offer.tools)
    const toolsChanged = sync(host.tools, tools, offer.tools.map((tool, index) => [toolNames[index]!, tool] as const), (name, tool) => {
      const wire = { ...tool, name } as Tool
      const { name: _name, ...definition } = wire
      return {
        name, definition, handler: unreachable, wire, isEnabled: true, mount: ref(tool.name),
        validateInput: undefined, jsonInput: undefined, jsonOutput: undefined, standardInput: undefined, standardOutput: undefined, validateOutput: undefined,
      } as ToolEntry
    }, name => skip('tool', name, 'the server has a tool of that name'))
    const resourcesChanged = sync(host.resources, resources, offer.resources.map(resource => [resource.uri, resource] as const), (uri, resource: Resource) => {
      const { uri: _uri, ...definition } = resource
      return { uri, definition, handler: (read: string, ctx: ServerContext) => source.forward('resources/read', { uri: read }, ctx), wire: resource, isEnabled: true, mount: ref(uri) } as ResourceEntry
    }, uri => skip('resource', uri, 'the server has a resource of that URI'))
    const templatesChanged = sync(host.templates, templates, offer.templates.map(template => [template.uriTemplate, template] as const), (key, template: ResourceTemplate) => {
      const { uriTemplate: _template, ...definition } = template
      let parsed
      try { parsed = uriTemplate(key) } catch (error) { skip('template', key, error instanceof Error ? error.message : String(error)); return undefined }
      return {
        template: parsed, definition, wire: template, isEnabled: true, mount: ref(key),
        handler: (read: string, _variables: unknown, ctx: ServerContext) => source.forward('resources/read', { uri: read }, ctx),
      } as TemplateEntry
    }, key => skip('template', key, 'the server has a template of that URI'))
    const promptNames = names(offer.prompts)
    const promptsChanged = sync(host.prompts, prompts, offer.prompts.map((prompt, index) => [promptNames[index]!, prompt] as const), (name, prompt: Prompt) => {
      const wire = { ...prompt, name } as Prompt
      const { name: _name, ...definition } = wire
      return { name, definition, handler: unreachable, wire, isEnabled: true, standardArguments: undefined, mount: ref(prompt.name) } as PromptEntry
    }, name => skip('prompt', name, 'the server has a prompt of that name'))
    if (toolsChanged) host.changed('tools')
    if (resourcesChanged || templatesChanged) host.changed('resources')
    if (promptsChanged) host.changed('prompts')
    if (resourcesChanged || templatesChanged) host.mountsChanged()
  }

  const clear = () => {
    const had = { tools: tools.size > 0, resources: resources.size + templates.size > 0, prompts: prompts.size > 0 }
    for (const [key, { entry }] of tools) if (host.tools.get(key) === entry) host.tools.delete(key)
    for (const [key, { entry }] of resources) if (host.resources.get(key) === entry) host.resources.delete(key)
    for (const [key, { entry }] of templates) if (host.templates.get(key) === entry) host.templates.delete(key)
    for (const [key, { entry }] of prompts) if (host.prompts.get(key) === entry) host.prompts.delete(key)
    tools.clear(); resources.clear(); templates.clear(); prompts.clear()
    if (had.tools) host.changed('tools')
    if (had.resources) { host.changed('resources'); host.mountsChanged() }
    if (had.prompts) host.changed('prompts')
  }

  const subscriptions: Subscription[] = []
  subscriptions.push(source.offers.subscribe({
    next: offer => { if (!isRemoved) apply(offer) },
    // The source is gone (its client closed): its entries go with it.
    complete: () => clear(),
    error: error => { host.report(error); clear() },
  }))
  // Its log messages, the prefix as logger: one about a forwarded request to that request's caller
  // (at the caller's level, in its era), any other to the mounting server's sessions, each at its own level.
  subscriptions.push(source.logs.subscribe({
    next: log => {
      const logger = prefix === '' ? log.logger : log.logger === undefined ? prefix : `${prefix}/${log.logger}`
      if (log.caller !== undefined) log.caller.log(log.level, log.data, logger)
      else host.log(log.level, log.data, logger)
    },
    error: error => host.report(error),
  }))

  return {
    remove: () => {
      if (isRemoved) return
      isRemoved = true
      for (const subscription of subscriptions) subscription.unsubscribe()
      clear()
      void source.close?.().catch(error => host.report(error))
    },
  }
}

/**
 * Brings one registry in step with a listing: what this mount wrote and is no longer listed goes,
 * what changed is rewritten, what is new is added unless the key has another owner. True when the
 * registry changed.
 */
function sync<E, T>(
  registry: Map<string, E>, written: Written<E>, listed: readonly (readonly [string, T])[],
  make: (key: string, item: T) => E | undefined, taken: (key: string) => void,
): boolean {
  let isChanged = false
  const seen = new Set<string>()
  for (const [key, item] of listed) {
    if (seen.has(key)) continue
    seen.add(key)
    const json = JSON.stringify(item)
    const mine = written.get(key)
    if (mine !== undefined && registry.get(key) === mine.entry) {
      if (mine.json === json) continue
    } else if (registry.has(key)) {
      taken(key)
      continue
    }
    const entry = make(key, item)
    if (entry === undefined) continue
    registry.set(key, entry)
    written.set(key, { entry, json })
    isChanged = true
  }
  for (const [key, { entry }] of written) {
    if (seen.has(key)) continue
    written.delete(key)
    if (registry.get(key) === entry) { registry.delete(key); isChanged = true }
  }
  return isChanged
}

/** The handler of a mounted tool or prompt, which the router never calls (it forwards). */
function unreachable(): never {
  throw new Error('A mounted entry is forwarded, not handled here')
}


/**
 * A source loaded on first use: what `mount(prefix, otherServer)` mounts, so the server's module
 * graph does not carry the client (the proxy of an in-process client) until a server is mounted.
 */
export function deferredMountable(load: () => Promise<Mountable>, mode: 'shared' | 'session' = 'shared'): Mountable {
  let loaded: Promise<Mountable> | undefined
  const source = (): Observable<Mountable> => defer(() => from(loaded ??= load()))
  return {
    offers: source().pipe(mergeMap(mountable => mountable.offers)),
    forward: (method, params, caller) => source().pipe(mergeMap(mountable => mountable.forward(method, params, caller))),
    watch: uri => source().pipe(mergeMap(mountable => mountable.watch(uri))),
    // Known before the source loads: a server mounted in mode 'session' is watched per session.
    watchFor: mode === 'shared' ? undefined : (uri, session) => source().pipe(mergeMap(mountable => mountable.watchFor?.(uri, session) ?? mountable.watch(uri))),
    logs: source().pipe(mergeMap(mountable => mountable.logs)),
    close: async () => { if (loaded !== undefined) await (await loaded).close?.() },
  }
}
