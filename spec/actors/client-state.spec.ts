import { describe, expect, it } from 'vitest'
import { NONE, effect, type Effect } from '../../actors/actor.ts'
import { clientLogic } from '../../actors/client/state.ts'
import type { ClientMessage, ClientState } from '../../actors/client/api.ts'

/** The client actor's logic as a table: given this state and this message, this state and these effects (nothing run). */
const logic = clientLogic('2025-11-25')
const fresh: ClientState = logic.initial({ status: 'awaiting-initialize', era: undefined, protocolVersion: '2025-11-25', serverCapabilities: {}, roots: [] })
const initializing: ClientState = { ...fresh, status: 'initializing' }
const legacy: ClientState = {
  ...fresh, status: 'operating', era: 'legacy', protocolVersion: '2025-06-18', serverInfo: { name: 's', version: '1' }, serverCapabilities: { tools: {} },
}
const modern: ClientState = { ...fresh, status: 'operating', era: 'modern', protocolVersion: '2026-07-28', serverInfo: { name: 's', version: '1' }, serverCapabilities: {} }
const roots = [{ uri: 'file:///work', name: 'work' }]

describe('clientLogic', () => {
  it.each<[string, ClientState, ClientMessage, ClientState, readonly Effect[]]>([
    ['initialize starts the legacy handshake', fresh, { type: 'initialize' }, initializing, NONE],
    ['initialized makes a legacy session operate, with what the server said', initializing,
      { type: 'initialized', result: { protocolVersion: '2025-06-18', capabilities: { tools: {} }, serverInfo: { name: 's', version: '1' }, instructions: 'be nice' } },
      { ...legacy, instructions: 'be nice' }, NONE],
    ['initialized without capabilities takes none', initializing, { type: 'initialized', result: { protocolVersion: '2025-06-18', serverInfo: { name: 's', version: '1' } } as never },
      { ...legacy, serverCapabilities: {}, instructions: undefined }, NONE],
    ['discovered makes the client modern and operating, with no handshake', fresh,
      { type: 'discovered', version: '2026-07-28', description: { supportedVersions: ['2026-07-28'], capabilities: {}, serverInfo: { name: 's', version: '1' }, instructions: undefined } },
      { ...modern, instructions: undefined }, NONE],
    ['a modern server that does not name itself is anonymous', fresh,
      { type: 'discovered', version: '2026-07-28', description: { supportedVersions: ['2026-07-28'], capabilities: {}, serverInfo: undefined, instructions: undefined } },
      { ...modern, serverInfo: { name: '', version: '' }, instructions: undefined }, NONE],
    ['version switches the revision spoken', modern, { type: 'version', version: '2026-09-01' }, { ...modern, protocolVersion: '2026-09-01' }, NONE],
    ['logLevel keeps the level for the modern _meta', modern, { type: 'logLevel', level: 'warning' }, { ...modern, logLevel: 'warning' }, NONE],
    ['roots of an operating legacy session ask to tell the server', legacy, { type: 'roots', roots }, { ...legacy, roots },
      [effect.emit({ type: 'roots-changed' })]],
    ['roots before the session operates are kept, told to nobody', initializing, { type: 'roots', roots }, { ...initializing, roots }, NONE],
    ['roots in the modern era are kept, told to nobody (a server asks in each request)', modern, { type: 'roots', roots }, { ...modern, roots }, NONE],
    ['reconnecting starts the handshake over, era unknown, the first version asked again', legacy, { type: 'reconnecting' },
      { ...legacy, status: 'awaiting-initialize', era: undefined, protocolVersion: '2025-11-25' }, NONE],
    ['closed ends the actor', legacy, { type: 'closed' }, { ...legacy, status: 'closed' }, [effect.done()]],
  ])('%s', (_, state, message, next, effects) => {
    expect(logic.transition(state, message)).toEqual([next, effects])
  })

  it('starts in the state it is given', () => {
    expect(logic.initial(legacy)).toBe(legacy)
  })
})
