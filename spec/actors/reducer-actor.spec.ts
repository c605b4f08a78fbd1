import { describe, expect, it } from 'vitest'
import { lastValueFrom, toArray } from 'rxjs'
import { createActor, withEffects, type ActorInspectionEvent, type ActorRef, type Step } from '../../actors/reducer-actor.ts'

type Message = 'inc' | 'dec' | 'boom' | 'twice'

const behaviour = (state: number, message: Message) => {
  if (message === 'boom') throw new Error('boom')
  return message === 'inc' ? state + 1 : message === 'dec' ? state - 1 : state
}

describe('createActor', () => {
  it.each<[Message[], number]>([
    [[], 0],
    [['inc'], 1],
    [['inc', 'inc', 'dec'], 1],
    [['inc', 'boom', 'inc'], 2],
  ])('after %j holds %i with the resume strategy', (messages, expected) => {
    const actor = createActor(0, behaviour, { reportError: () => {} })
    for (const message of messages) actor.send(message)
    expect(actor.state).toBe(expected)
  })

  it.each([
    ['resume', 2, false],
    ['restart', 1, false],
    ['stop', 1, true],
  ] as const)('with %s supervision a failure leaves state %i (stopped: %s)', (supervision, expected, isStopped) => {
    const actor = createActor(0, behaviour, { supervision, reportError: () => {} })
    actor.send('inc')
    actor.send('boom')
    actor.send('inc')
    expect(actor.state).toBe(isStopped ? 1 : expected)
    expect(actor.isStopped).toBe(isStopped)
  })

  it('queues messages sent from effects behind the current one', () => {
    const order: string[] = []
    const actor: ActorRef<number, Message> = createActor<number, Message>(0, (state, message): Step<number> => {
      order.push(`${message}@${state}`)
      if (message === 'twice') return withEffects(state, [() => actor.send('inc'), () => actor.send('inc')])
      return behaviour(state, message)
    })
    actor.send('twice')
    expect(actor.state).toBe(2)
    expect(order).toEqual(['twice@0', 'inc@0', 'inc@1'])
  })

  it('emits its states and completes on stop', async () => {
    const actor = createActor(0, behaviour)
    const states = lastValueFrom(actor.states.pipe(toArray()))
    actor.send('inc')
    actor.send('inc')
    await actor.stop()
    expect(await states).toEqual([0, 1, 2])
    actor.send('inc')
    expect(actor.state).toBe(2)
  })

  it('runs onStop once with the last state', async () => {
    const seen: number[] = []
    const actor = createActor(0, behaviour, { onStop: state => seen.push(state) })
    actor.send('inc')
    await actor.stop()
    await actor.stop()
    expect(seen).toEqual([1])
  })

  it('traces messages, states and errors through inspect', () => {
    const events: ActorInspectionEvent<number, Message>[] = []
    const actor = createActor(0, behaviour, { name: 'counter', inspect: event => events.push(event), reportError: () => {} })
    actor.send('inc')
    actor.send('boom')
    expect(events.map(event => event.type)).toMatchInlineSnapshot(`
      [
        "rxmcp.actor.message",
        "rxmcp.actor.state",
        "rxmcp.actor.message",
        "rxmcp.actor.error",
      ]
    `)
  })

  it('stops with await using', async () => {
    let ref
    {
      await using actor = createActor(0, behaviour)
      ref = actor
    }
    expect(ref.isStopped).toBe(true)
  })
})
