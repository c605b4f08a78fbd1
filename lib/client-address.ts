/**
 * The key a per-address budget counts a client under, for every layer that keeps one: the HTTP and
 * WebSocket listeners (sessions, exchanges, failed authentications, request rates per address)
 * and the task quotas of anonymous callers. One function, so a client is the same client to all.
 */

/**
 * A client's IP address, as a transport saw it, in one canonical form. IPv4 is itself (an
 * IPv4-mapped IPv6 address counts as its IPv4 address); IPv6 is its /64 network, since one
 * subscriber is routinely given a whole /64 and could otherwise draw a fresh quota for every one of
 * its 2^64 addresses. A zone index (`fe80::1%eth0`) is dropped: it names an interface of this host.
 * A transport that names no address gives `address:unknown`: every such client shares one quota,
 * which is safe (never more than one client's share) rather than generous. A listener that must
 * not lump unknown clients together checks for a missing address before asking.
 * @example
 * clientAddressKey('::ffff:10.0.0.7')          // 'address:10.0.0.7'
 * clientAddressKey('2001:db8:1:2:3:4:5:6')     // 'address:2001:db8:1:2::/64'
 */
export function clientAddressKey(remoteAddress: string | undefined): string {
  if (remoteAddress === undefined || remoteAddress === '') return 'address:unknown'
  // Requests come in runs from one address (a connection's): the last key is asked again.
  if (remoteAddress === last.address) return last.key
  const key = keyOf(remoteAddress)
  last.address = remoteAddress
  last.key = key
  return key
}

/** The address asked last and its key. */
const last = { address: '', key: '' }

function keyOf(remoteAddress: string): string {
  const address = remoteAddress.split('%')[0]!.toLowerCase()
  if (!address.includes(':')) return `address:${address}`
  const groups = expandIpv6(address)
  if (groups === undefined) return `address:${address}`
  // ::ffff:a.b.c.d, an IPv4 client on a dual-stack socket.
  if (groups.slice(0, 5).every(group => group === 0) && groups[5] === 0xffff) {
    return `address:${groups[6]! >> 8}.${groups[6]! & 0xff}.${groups[7]! >> 8}.${groups[7]! & 0xff}`
  }
  return `address:${groups.slice(0, 4).map(group => group.toString(16)).join(':')}::/64`
}

/** The eight 16-bit groups of an IPv6 address (with `::` and a dotted IPv4 tail), or undefined if malformed. */
function expandIpv6(address: string): number[] | undefined {
  let text = address
  // A dotted IPv4 tail stands for the last two groups.
  const dotted = /(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(text)
  if (dotted !== null) {
    const bytes = dotted.slice(1).map(Number)
    if (bytes.some(byte => byte > 255)) return undefined
    text = `${text.slice(0, dotted.index)}${((bytes[0]! << 8) | bytes[1]!).toString(16)}:${((bytes[2]! << 8) | bytes[3]!).toString(16)}`
  }
  const halves = text.split('::')
  if (halves.length > 2) return undefined
  const parse = (part: string) => part === '' ? [] : part.split(':').map(group => /^[\da-f]{1,4}$/.test(group) ? Number.parseInt(group, 16) : Number.NaN)
  const head = parse(halves[0]!)
  const tail = halves.length === 2 ? parse(halves[1]!) : []
  const missing = 8 - head.length - tail.length
  if (halves.length === 1 ? missing !== 0 : missing < 1) return undefined
  const groups = [...head, ...new Array<number>(halves.length === 2 ? missing : 0).fill(0), ...tail]
  return groups.some(Number.isNaN) ? undefined : groups
}
