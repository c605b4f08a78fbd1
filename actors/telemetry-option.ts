import type { Instrumentation, TelemetryOptions } from '../lib/request-observer.ts'

/**
 * The instrumentation a `telemetry` option asks for, loading it then (actors/telemetry.ts and
 * `@opentelemetry/api`, by dynamic import); undefined, and nothing loaded, when it asks for none.
 * The server, the client and the `rxmcp bridge` command turn their option into telemetry here.
 * @example
 * const instrumentation = await telemetryOf(options.telemetry)
 */
export function telemetryOf(option: boolean | TelemetryOptions | undefined): Promise<Instrumentation> | undefined {
  if (option === undefined || option === false) return undefined
  return import('./telemetry.ts').then(module => module.loadTelemetry(option))
}
