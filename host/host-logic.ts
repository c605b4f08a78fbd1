/**
 * The host actor's logic: the parent of one supervisor per configured server (host/supervisor.ts),
 * and the one place the aggregated view is made, from what the supervisors report. Pure: the
 * owner (host/host.ts) sends it the configuration's changes, and reads the view, the states and the
 * clients from its snapshots.
 *
 * ```
 *   host ─┬─ supervisor "a" ── client (one run; restarted by the supervisor's strategy)
 *         └─ supervisor "b" ── client
 * ```
 */
import { NONE, effect, type ActorLogic, type AnyActorLogic, type ChildMessage, type Step } from '../actors/actor.ts'
import type { McpClient } from '../actors/client.ts'
import type { HostConfig, HostServerConfig } from '../lib/host-config.ts'
import { namespacedNames } from '../lib/tool-names.ts'
import type { Prompt, Resource, Tool } from '../lib/schema/types.ts'
import type { ServerState, SupervisorReport } from './supervisor.ts'
import type { HostTool } from './view.ts'

/** A resource of the aggregated view, with the server that owns it. */
export interface HostResource { readonly server: string; readonly resource: Resource }
/** A prompt of the aggregated view: its name in the view, the server that owns it, and the prompt as that server listed it. */
export interface HostPrompt { readonly name: string; readonly server: string; readonly prompt: Prompt }

/** One configured server as the host knows it: its state, and its client and process while it has them. */
export interface HostServer { readonly state: ServerState; readonly client?: McpClient; readonly pid?: number }

/** What one ready server offers, as last listed (and cut to the host's limits). */
export interface Offer { readonly tools: readonly Tool[]; readonly resources: readonly Resource[]; readonly prompts: readonly Prompt[] }

/** The host actor's state. */
export interface HostState {
  /** The configuration in force: the view follows its order and its allow and deny lists. */
  readonly config: HostConfig
  /** Every running server (enabled and not removed), in the order it was added. */
  readonly servers: ReadonlyMap<string, HostServer>
  /** Each server's state (a new map at each change, for the public stream). */
  readonly states: ReadonlyMap<string, ServerState>
  /** Each connected server's offer. */
  readonly offers: ReadonlyMap<string, Offer>
  /** Consents given for good (`allow-always`), by key (`tool:<server>:<tool>`, `sampling:<server>`, `elicitation:<server>`). */
  readonly allowedAlways: ReadonlySet<string>
  readonly tools: readonly HostTool[]
  /** The aggregated tools by name: a call looks its tool up on every request (the gateway's hot path). */
  readonly toolsByName: ReadonlyMap<string, HostTool>
  readonly resources: readonly HostResource[]
  readonly prompts: readonly HostPrompt[]
}

/** What the host actor takes. */
export type HostMessage =
  /** Starts supervising a server: `supervisor` is its supervisor's logic. */
  | { readonly type: 'add'; readonly config: HostServerConfig; readonly supervisor: AnyActorLogic }
  /** Stops a server's supervisor (its run and client first): the server is `stopped`, then forgotten. */
  | { readonly type: 'remove'; readonly name: string }
  /** Drops a stopped server from the states (sent by the host actor to itself after `remove`). */
  | { readonly type: 'forget'; readonly name: string }
  /** A new configuration: the view's order and tool lists follow it (the servers are added and removed apart). */
  | { readonly type: 'configure'; readonly config: HostConfig }
  /** The user allowed something for good: not asked again. */
  | { readonly type: 'allow-always'; readonly key: string }
  | SupervisorReport
  | ChildMessage

const EMPTY_OFFER: Offer = Object.freeze({ tools: [], resources: [], prompts: [] })
const STOPPED: ServerState = Object.freeze({ status: 'stopped' })

/** The host's logic, its input the configuration it starts with (the owner adds its servers). */
export const hostLogic: ActorLogic<HostState, HostMessage, HostConfig> = {
  name: 'host',
  initial: config => ({ config, servers: new Map(), states: new Map(), offers: new Map(), allowedAlways: new Set(), tools: [], toolsByName: new Map(), resources: [], prompts: [] }),
  transition: (state, message): Step<HostState> => {
    switch (message.type) {
      case 'add': {
        const name = message.config.name
        if (state.servers.has(name)) return [state, NONE]
        return [withServer(state, name, { state: { status: 'starting', attempt: 1 } }), [effect.spawn(name, message.supervisor), effect.send({ child: name }, { type: 'run' })]]
      }
      case 'remove': {
        const server = state.servers.get(message.name)
        if (server === undefined || server.state.status === 'stopped') return [state, NONE]
        const offers = new Map(state.offers)
        offers.delete(message.name)
        // Seen as stopped first, then gone: two snapshots, as the states stream has always shown.
        return [publish({ ...withServer(state, message.name, { state: STOPPED }), offers }), [effect.stop(message.name), effect.send('self', { type: 'forget', name: message.name })]]
      }
      case 'forget': {
        if (state.servers.get(message.name)?.state.status !== 'stopped') return [state, NONE]
        const servers = new Map(state.servers)
        servers.delete(message.name)
        return [{ ...state, servers, states: statesOf(servers) }, NONE]
      }
      case 'configure': return [publish({ ...state, config: message.config }), NONE]
      case 'allow-always': return state.allowedAlways.has(message.key) ? [state, NONE] : [{ ...state, allowedAlways: new Set([...state.allowedAlways, message.key]) }, NONE]
      case 'server': {
        // A report from a supervisor stopped or removed meanwhile is late: nothing to change.
        const known = state.servers.get(message.name)
        if (known === undefined || known.state.status === 'stopped') return [state, NONE]
        const next = withServer(state, message.name, { state: message.state, client: message.client, pid: message.pid })
        // Its client gone (crashed, failed): what it offered leaves the view with it.
        if (message.client !== undefined || !next.offers.has(message.name)) return [next, NONE]
        const offers = new Map(next.offers)
        offers.delete(message.name)
        return [publish({ ...next, offers }), NONE]
      }
      case 'offer': {
        const server = state.servers.get(message.name)
        if (server?.client === undefined) return [state, NONE]
        const offers = new Map(state.offers)
        offers.set(message.name, { ...(offers.get(message.name) ?? EMPTY_OFFER), [message.kind]: message.items })
        return [publish({ ...state, offers }), NONE]
      }
      // A supervisor does not fail (its transition does not throw, and it has no fail effect).
      default: return [state, NONE]
    }
  },
}

function withServer(state: HostState, name: string, server: HostServer): HostState {
  const servers = new Map(state.servers)
  servers.set(name, server)
  return { ...state, servers, states: statesOf(servers) }
}

function statesOf(servers: ReadonlyMap<string, HostServer>): ReadonlyMap<string, ServerState> {
  return new Map([...servers].map(([name, server]) => [name, server.state]))
}

/** `state` with the aggregated lists made again from every offer, in configuration order, namespaced. */
export function publish(state: HostState): HostState {
  const tools: { server: string; tool: Tool }[] = []
  const resources: HostResource[] = []
  const prompts: { server: string; prompt: Prompt }[] = []
  for (const [name, config] of state.config.servers) {
    const offer = state.offers.get(name)
    if (offer === undefined) continue
    for (const tool of offer.tools) if (isToolAllowed(config, tool.name)) tools.push({ server: name, tool })
    for (const resource of offer.resources) resources.push({ server: name, resource })
    for (const prompt of offer.prompts) prompts.push({ server: name, prompt })
  }
  const toolNames = namespacedNames(tools.map(({ server, tool }) => ({ server, name: tool.name })))
  const promptNames = namespacedNames(prompts.map(({ server, prompt }) => ({ server, name: prompt.name })))
  const hostTools = tools.map((entry, index) => ({ name: toolNames[index]!, ...entry }))
  return {
    ...state,
    tools: hostTools,
    toolsByName: new Map(hostTools.map(tool => [tool.name, tool])),
    resources,
    prompts: prompts.map((entry, index) => ({ name: promptNames[index]!, ...entry })),
  }
}

function isToolAllowed(config: HostServerConfig, tool: string): boolean {
  if (config.allowTools !== undefined && !config.allowTools.includes(tool)) return false
  return !config.denyTools.includes(tool)
}
