/**
 * base64 and base64url (RFC 4648 §4 and §5) and random ids, over Web Crypto and `btoa`/`atob`, so
 * it runs in Node, browsers and workers alike. No I/O.
 */

/** Bytes as base64 text, padded. */
export function base64(bytes: Uint8Array): string {
  let binary = ''
  for (let i = 0; i < bytes.length; i++) binary += String.fromCharCode(bytes[i]!)
  return btoa(binary)
}

/** The bytes of padded base64 text (the caller checked its alphabet and length). */
export function bytesOfBase64(text: string): Uint8Array {
  const binary = atob(text)
  const bytes = new Uint8Array(binary.length)
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i)
  return bytes
}

/** Bytes as base64url text without padding. */
export function base64url(bytes: Uint8Array): string {
  return base64(bytes).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '')
}

/** The bytes of base64url text (padding optional), or undefined when it is not base64url. */
export function bytesOfBase64url(text: string): Uint8Array | undefined {
  if (!/^[A-Za-z0-9_-]*$/.test(text) || text.length % 4 === 1) return undefined
  return bytesOfBase64(text.replace(/-/g, '+').replace(/_/g, '/') + '==='.slice((text.length + 3) % 4))
}

/**
 * `bytes` random bytes from the platform's CSPRNG (Web Crypto) as base64url text: unguessable,
 * and safe in URLs and headers.
 */
export function randomId(bytes: number): string {
  // Drawn from a pool filled 4 KiB at a time: one CSPRNG call per id costs more than the id itself.
  // Each byte serves one id only.
  if (poolOffset + bytes > pool.length) {
    pool = crypto.getRandomValues(new Uint8Array(Math.max(RANDOM_POOL_BYTES, bytes)))
    poolOffset = 0
  }
  const id = base64url(pool.subarray(poolOffset, poolOffset + bytes))
  poolOffset += bytes
  return id
}

const RANDOM_POOL_BYTES = 4096
let pool = new Uint8Array(0)
let poolOffset = 0
