import { describe, expect, it } from 'vitest'
import { clientAddressKey } from '../../lib/client-address.ts'
import { addressKey } from '../../transports/client-policy.ts'
import { ClientGroups, ConcurrencyBudget, SessionAdmission } from '../../transports/client-budgets.ts'

describe('clientAddressKey', () => {
  it.each([
    ['127.0.0.1', 'address:127.0.0.1'],
    ['::ffff:10.1.2.3', 'address:10.1.2.3'],
    ['0:0:0:0:0:ffff:10.1.2.3', 'address:10.1.2.3'],
    ['2001:db8:1:2:3:4:5:6', 'address:2001:db8:1:2::/64'],
    ['2001:db8:1:2:ffff::9', 'address:2001:db8:1:2::/64'],
    ['2001:0DB8:0001:0002::1', 'address:2001:db8:1:2::/64'],
    ['2001:db8::1', 'address:2001:db8:0:0::/64'],
    ['fe80::1%eth0', 'address:fe80:0:0:0::/64'],
    ['::1', 'address:0:0:0:0::/64'],
    ['2001:db8:1:2:3:4:5:6:7', 'address:2001:db8:1:2:3:4:5:6:7'],
    [undefined, 'address:unknown'],
  ])('keys %s as %s: an IPv6 host by its /64, whatever address of it it uses', (address, key) => {
    expect(clientAddressKey(address)).toBe(key)
  })

  it('is the one key of the listeners and the task quotas; a listener does not lump unknown addresses together', async () => {
    const root = await import('../../entries/kernel.ts')
    expect(root.clientAddressKey).toBe(clientAddressKey)
    expect(addressKey('::ffff:10.1.2.3')).toBe('address:10.1.2.3')
    expect([addressKey(undefined), addressKey('')]).toEqual([undefined, undefined])
  })
})

describe('ConcurrencyBudget', () => {
  it('refuses past the per-client share, then past the total, and forgets a client at zero', () => {
    const budget = new ConcurrencyBudget(2, 3)
    expect([budget.acquire('a'), budget.acquire('a'), budget.acquire('a')]).toEqual([undefined, undefined, 'client'])
    expect([budget.acquire('b'), budget.acquire('c')]).toEqual([undefined, 'total'])
    budget.release('a')
    expect(budget.acquire('c')).toBeUndefined()
    budget.release('unknown')
    expect(budget.size).toBe(3)
  })

  it('holds a client it cannot tell apart (undefined key) to the total only', () => {
    const budget = new ConcurrencyBudget(1, 2)
    expect([budget.acquire(undefined), budget.acquire(undefined), budget.acquire(undefined)]).toEqual([undefined, undefined, 'total'])
    budget.release(undefined)
    expect([budget.size, budget.acquire('a'), budget.size]).toEqual([1, undefined, 2])
  })
})

describe('ClientGroups', () => {
  it('keeps each client\'s items apart, and counts them', () => {
    const groups = new ClientGroups<{ id: number }>()
    const [one, two, three] = [{ id: 1 }, { id: 2 }, { id: 3 }]
    groups.add('a', one)
    groups.add('a', two)
    groups.add('b', three)
    expect([...groups.of('a')]).toEqual([one, two])
    groups.delete(two)
    groups.delete(three)
    expect([groups.count('a'), groups.count('b'), [...groups.of('b')]]).toEqual([1, 0, []])
  })
})

describe('SessionAdmission', () => {
  const session = (lastSeen: number, busy = false) => ({ lastSeen, hasRequestInFlight: () => busy })
  type S = ReturnType<typeof session>

  it('lets a client at its share replace its own least recently active idle session, else refuses it with the wait', () => {
    const evicted: [S, string][] = []
    const admission = new SessionAdmission<S>({ perClient: 2, total: 10, minIdle: 100 }, (s, why) => { evicted.push([s, why]); admission.delete(s) })
    const [busy, idle, other] = [session(0, true), session(50), session(0)]
    admission.add('a', busy)
    admission.add('a', idle)
    admission.add('b', other)
    // A's busy session is the oldest, but a request of it is in flight; its idle one is not old enough.
    expect(admission.admit('a', [busy, idle, other], 3, false, 100)).toEqual({ reason: 'client', retryAfterMs: 50 })
    expect(admission.admit('a', [busy, idle, other], 3, false, 150)).toBeUndefined()
    expect(evicted).toEqual([[idle, 'client']])
  })

  it('at the total, evicts the least recently active idle session of anyone, else refuses; an unknown client is held to the total only', () => {
    const evicted: S[] = []
    const admission = new SessionAdmission<S>({ perClient: 1, total: 2, minIdle: 100 }, s => evicted.push(s))
    const [newer, older] = [session(80), session(10)]
    expect(admission.admit(undefined, [newer, older], 2, false, 100)).toEqual({ reason: 'total', retryAfterMs: 10 })
    expect(admission.admit(undefined, [newer, older], 2, false, 110)).toBeUndefined()
    expect(evicted).toEqual([older])
    // Ordered (least recently active first): the first idle one goes, without searching on.
    expect(admission.admit('c', [newer, older], 2, true, 500)).toBeUndefined()
    expect(evicted).toEqual([older, newer])
  })
})
