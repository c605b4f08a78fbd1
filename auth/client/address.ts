/**
 * What kind of network address a host names, read from the literal alone (no I/O): the ground of
 * the OAuth client's endpoint policy (see checkEndpoint in auth/client/endpoint-guard.ts).
 *
 * Sources: the IANA IPv4 and IPv6 Special-Purpose Address Registries (RFC 6890), RFC 1918
 * (private IPv4), RFC 4193 (unique local IPv6), RFC 3927 and RFC 4291 (link-local), RFC 6761
 * (`localhost`).
 */

/**
 * `public`: globally reachable. `loopback`: this machine (127.0.0.0/8, ::1, `localhost`).
 * `private`: a private or shared network (10/8, 172.16/12, 192.168/16, 100.64/10, fc00::/7,
 * fec0::/10). `link-local`: 169.254/16 and fe80::/10, where cloud metadata services live.
 * `special`: anything else not globally reachable (0.0.0.0/8, ::, multicast, broadcast, reserved,
 * documentation, benchmarking and IETF protocol ranges).
 */
export type AddressKind = 'public' | 'loopback' | 'private' | 'link-local' | 'special'

/**
 * The kind of a URL host (`URL.hostname`: IPv6 in brackets allowed, a trailing dot ignored):
 * IP literals by their range, `localhost` and `*.localhost` as loopback, and undefined for any
 * other name (its addresses say what it is; see addressKind on each of them).
 */
export function hostKind(hostname: string): AddressKind | undefined {
  const host = normalizeHost(hostname)
  if (host === 'localhost' || host.endsWith('.localhost')) return 'loopback'
  return addressKind(host)
}

/** The kind of an IP address (IPv4 dotted, or IPv6 in any textual form); undefined when `address` is not one. */
export function addressKind(address: string): AddressKind | undefined {
  const v4 = parseIpv4(address)
  if (v4 !== undefined) return ipv4Kind(v4)
  const v6 = parseIpv6(address)
  return v6 === undefined ? undefined : ipv6Kind(v6)
}

/** A host as compared in allow-lists: lower case, without IPv6 brackets or a trailing dot. */
export function normalizeHost(hostname: string): string {
  let host = hostname.toLowerCase()
  if (host.startsWith('[') && host.endsWith(']')) host = host.slice(1, -1)
  return host.endsWith('.') ? host.slice(0, -1) : host
}

/** IPv4 ranges in order, first match wins: [network, prefix length, kind]. */
const IPV4_RANGES: ReadonlyArray<readonly [number, number, AddressKind]> = [
  [ipv4(0, 0, 0, 0), 8, 'special'],          // "this network", 0.0.0.0
  [ipv4(10, 0, 0, 0), 8, 'private'],
  [ipv4(100, 64, 0, 0), 10, 'private'],      // shared address space (carrier-grade NAT; Alibaba's metadata service)
  [ipv4(127, 0, 0, 0), 8, 'loopback'],
  [ipv4(169, 254, 0, 0), 16, 'link-local'],  // 169.254.169.254, 169.254.170.2: cloud metadata services
  [ipv4(172, 16, 0, 0), 12, 'private'],
  [ipv4(192, 0, 0, 0), 24, 'special'],       // IETF protocol assignments (192.0.0.192, …)
  [ipv4(192, 0, 2, 0), 24, 'special'],       // documentation
  [ipv4(192, 88, 99, 0), 24, 'special'],     // 6to4 relay anycast (deprecated)
  [ipv4(192, 168, 0, 0), 16, 'private'],
  [ipv4(198, 18, 0, 0), 15, 'special'],      // benchmarking
  [ipv4(198, 51, 100, 0), 24, 'special'],    // documentation
  [ipv4(203, 0, 113, 0), 24, 'special'],     // documentation
  [ipv4(224, 0, 0, 0), 4, 'special'],        // multicast
  [ipv4(240, 0, 0, 0), 4, 'special'],        // reserved, and 255.255.255.255 broadcast
]

function ipv4Kind(value: number): AddressKind {
  for (const [network, length, kind] of IPV4_RANGES) {
    const mask = length === 0 ? 0 : (~0 << (32 - length)) >>> 0
    if (((value & mask) >>> 0) === network) return kind
  }
  return 'public'
}

/** IPv6 by its eight 16-bit groups. */
function ipv6Kind(groups: readonly number[]): AddressKind {
  const [g0, g1, g2, g3, g4, g5, g6, g7] = groups as [number, number, number, number, number, number, number, number]
  const embedded = (g6 << 16 | g7) >>> 0
  if (groups.every(group => group === 0)) return 'special'                                  // ::
  if (g0 === 0 && g1 === 0 && g2 === 0 && g3 === 0 && g4 === 0 && g5 === 0 && g6 === 0 && g7 === 1) return 'loopback' // ::1
  // Forms that carry an IPv4 address reach what that address reaches: judged by it.
  if (g0 === 0 && g1 === 0 && g2 === 0 && g3 === 0 && g4 === 0 && g5 === 0xffff) return ipv4Kind(embedded)              // ::ffff:a.b.c.d, mapped
  if (g0 === 0 && g1 === 0 && g2 === 0 && g3 === 0 && g4 === 0xffff && g5 === 0) return ipv4Kind(embedded)              // ::ffff:0:a.b.c.d, translated
  if (g0 === 0x64 && g1 === 0xff9b && (g2 === 0 || g2 === 1)) return ipv4Kind(embedded)                                // 64:ff9b::/96 and 64:ff9b:1::/48, NAT64
  if (g0 === 0x2002) return ipv4Kind((g1 << 16 | g2) >>> 0)                                                             // 2002::/16, 6to4
  if (g0 === 0 && g1 === 0 && g2 === 0 && g3 === 0 && g4 === 0 && g5 === 0) return 'special'                            // ::a.b.c.d, IPv4-compatible (deprecated)
  if ((g0 & 0xffc0) === 0xfe80) return 'link-local'                                                                     // fe80::/10
  if ((g0 & 0xfe00) === 0xfc00) return 'private'                                                                        // fc00::/7, unique local (AWS's fd00:ec2::254)
  if ((g0 & 0xffc0) === 0xfec0) return 'private'                                                                        // fec0::/10, site-local (deprecated)
  if ((g0 & 0xff00) === 0xff00) return 'special'                                                                        // ff00::/8, multicast
  if (g0 === 0x100 && g1 === 0 && g2 === 0 && g3 === 0) return 'special'                                                // 100::/64, discard
  if (g0 === 0x2001 && g1 === 0xdb8) return 'special'                                                                   // 2001:db8::/32, documentation
  if (g0 === 0x2001 && g1 < 0x200) return 'special'                                                                     // 2001::/23, IETF protocol assignments (Teredo, ORCHID, …)
  if (g0 === 0x3fff && g1 < 0x1000) return 'special'                                                                    // 3fff::/20, documentation
  if (g0 === 0x5f00) return 'special'                                                                                   // 5f00::/16, segment routing
  return 'public'
}

function ipv4(a: number, b: number, c: number, d: number): number {
  return ((a << 24) | (b << 16) | (c << 8) | d) >>> 0
}

/** A dotted-quad IPv4 address as a number; undefined for anything else (URL.hostname already normalized other forms). */
function parseIpv4(text: string): number | undefined {
  const parts = text.split('.')
  if (parts.length !== 4) return undefined
  let value = 0
  for (const part of parts) {
    if (!/^\d{1,3}$/.test(part) || Number(part) > 255) return undefined
    value = value * 256 + Number(part)
  }
  return value
}

/** An IPv6 address (with `::`, an embedded dotted IPv4 tail, a zone id) as eight groups; undefined for anything else. */
function parseIpv6(text: string): number[] | undefined {
  let address = text.startsWith('[') && text.endsWith(']') ? text.slice(1, -1) : text
  const zone = address.indexOf('%')
  if (zone !== -1) address = address.slice(0, zone)
  if (!address.includes(':')) return undefined
  // An IPv4 tail becomes two groups.
  const tail = /^(.*:)(\d+\.\d+\.\d+\.\d+)$/.exec(address)
  if (tail !== null) {
    const v4 = parseIpv4(tail[2]!)
    if (v4 === undefined) return undefined
    address = `${tail[1]}${(v4 >>> 16).toString(16)}:${(v4 & 0xffff).toString(16)}`
  }
  const halves = address.split('::')
  if (halves.length > 2) return undefined
  const read = (half: string): number[] | undefined => {
    if (half === '') return []
    const groups: number[] = []
    for (const group of half.split(':')) {
      if (!/^[0-9a-f]{1,4}$/i.test(group)) return undefined
      groups.push(parseInt(group, 16))
    }
    return groups
  }
  const head = read(halves[0]!)
  const rest = halves.length === 2 ? read(halves[1]!) : []
  if (head === undefined || rest === undefined) return undefined
  if (halves.length === 1) return head.length === 8 ? head : undefined
  const missing = 8 - head.length - rest.length
  return missing < 1 ? undefined : [...head, ...new Array<number>(missing).fill(0), ...rest]
}
