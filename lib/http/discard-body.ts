/**
 * Lets a fetch response's body go unread: cancels it, and settles once cancelled without ever
 * rejecting. On a request aborted meanwhile (a client closing) the cancel rejects with the abort,
 * and a runtime that ends on an unhandled rejection (Deno) would end with it.
 */
export function discardBody(response: Response): Promise<void> {
  return response.body?.cancel().catch(() => {}) ?? Promise.resolve()
}
