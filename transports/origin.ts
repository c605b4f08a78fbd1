/**
 * The listeners' Origin and Host rules, kept where the WebSocket listener, the bridge and the
 * command import them; they are pure and live in lib/http/origin.ts.
 */
export { LOOPBACK_HOSTS, isAllowedHost, isAllowedOrigin, isCrossSiteWithoutOrigin, isLoopbackHost } from '../lib/http/origin.ts'
