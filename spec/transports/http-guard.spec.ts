import { describe, expect, it } from 'vitest'
import { clientAddressKey } from '../../transports/http-guard.ts'
import { ClientGroups, ConcurrencyBudget } from '../../transports/http-budgets.ts'

describe('clientAddressKey', () => {
  it.each([
    ['127.0.0.1', '127.0.0.1'],
    ['::ffff:10.1.2.3', '10.1.2.3'],
    ['0:0:0:0:0:ffff:10.1.2.3', '10.1.2.3'],
    ['2001:db8:1:2:3:4:5:6', '2001:db8:1:2::/64'],
    ['2001:db8:1:2:ffff::9', '2001:db8:1:2::/64'],
    ['2001:0DB8:0001:0002::1', '2001:db8:1:2::/64'],
    ['2001:db8::1', '2001:db8:0:0::/64'],
    ['fe80::1%eth0', 'fe80:0:0:0::/64'],
    ['::1', '0:0:0:0::/64'],
    [undefined, ''],
  ])('keys %s as %s: an IPv6 host by its /64, whatever address of it it uses', (address, key) => {
    expect(clientAddressKey(address)).toBe(key)
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
  it('keeps each client\'s items least recently touched first, and counts them', () => {
    const groups = new ClientGroups<{ id: number }>()
    const [one, two, three] = [{ id: 1 }, { id: 2 }, { id: 3 }]
    groups.add('a', one)
    groups.add('a', two)
    groups.add('b', three)
    groups.touch(one)
    expect([...groups.of('a')]).toEqual([two, one])
    groups.delete(two)
    groups.delete(three)
    expect([groups.count('a'), groups.count('b'), [...groups.of('b')]]).toEqual([1, 0, []])
  })
})
