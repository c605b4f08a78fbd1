/**
 * base64url (RFC 4648 §5, no padding) and random ids in it, over Web Crypto and `btoa`/`atob`, so
 * it runs in Node, browsers and workers alike. No I/O.
 */

/** Bytes as base64url text without padding. */
export function base64url(bytes: Uint8Array): string {
  let binary = ''
  for (let i = 0; i < bytes.length; i++) binary += String.fromCharCode(bytes[i]!)
  return btoa(binary).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '')
}

/** The bytes of base64url text (padding optional), or undefined when it is not base64url. */
export function bytesOfBase64url(text: string): Uint8Array | undefined {
  if (!/^[A-Za-z0-9_-]*$/.test(text) || text.length % 4 === 1) return undefined
  const binary = atob(text.replace(/-/g, '+').replace(/_/g, '/') + '==='.slice((text.length + 3) % 4))
  const bytes = new Uint8Array(binary.length)
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i)
  return bytes
}

/**
 * `bytes` random bytes from the platform's CSPRNG (Web Crypto) as base64url text: unguessable,
 * and safe in URLs and headers.
 */
export function randomId(bytes: number): string {
  return base64url(crypto.getRandomValues(new Uint8Array(bytes)))
}
