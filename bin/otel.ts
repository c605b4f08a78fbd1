/**
 * The OpenTelemetry Node SDK, configured only from the standard `OTEL_*` environment variables, for
 * the processes rxmcp itself runs: `rxmcp gateway`, `rxmcp bridge` and examples/telemetry/server.ts.
 *
 * `NodeSDK` 0.223, made with no options, reads everything itself: `OTEL_SERVICE_NAME` and
 * `OTEL_RESOURCE_ATTRIBUTES` (the resource), `OTEL_TRACES_EXPORTER` / `OTEL_METRICS_EXPORTER` /
 * `OTEL_LOGS_EXPORTER` (`otlp` by default, `console`, `none`), `OTEL_EXPORTER_OTLP_ENDPOINT` and
 * the per-signal `..._TRACES_ENDPOINT` / `..._METRICS_ENDPOINT`, `OTEL_EXPORTER_OTLP_PROTOCOL`
 * (`http/protobuf` by default, `http/json`, `grpc`; per signal too), `OTEL_EXPORTER_OTLP_HEADERS`,
 * `OTEL_BSP_SCHEDULE_DELAY` and the other batch settings, `OTEL_METRIC_EXPORT_INTERVAL`,
 * `OTEL_TRACES_SAMPLER`, `OTEL_PROPAGATORS`, `OTEL_LOG_LEVEL` and `OTEL_SDK_DISABLED`. Nothing
 * here adds to that: the SDK is started as the variables say, and shut down (its last spans and
 * metrics exported) when asked.
 *
 * `@opentelemetry/sdk-node` (and `@opentelemetry/api`) are loaded by dynamic import only when
 * started, so the commands cost nothing without them.
 */

/** What started: `shutdown()` exports what is buffered and stops the SDK (once; later calls wait for the first). */
export interface OtelSdk {
  shutdown(): Promise<void>
}

/** Said when the SDK packages are missing. */
export const OTEL_MISSING = 'telemetry needs the OpenTelemetry SDK: npm install @opentelemetry/api @opentelemetry/sdk-node'

/**
 * Whether the environment asks for telemetry: an exporter other than `none` named in
 * `OTEL_TRACES_EXPORTER` or `OTEL_METRICS_EXPORTER`, or an OTLP endpoint set
 * (`OTEL_EXPORTER_OTLP_ENDPOINT`, `..._TRACES_ENDPOINT`, `..._METRICS_ENDPOINT`), and
 * `OTEL_SDK_DISABLED` not `true`.
 */
export function isTelemetryAsked(env: NodeJS.ProcessEnv = process.env): boolean {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true') return false
  const exporter = (name: string) => (env[name] ?? '').split(',').map(item => item.trim()).some(item => item !== '' && item !== 'none')
  const set = (name: string) => (env[name] ?? '').trim() !== ''
  return exporter('OTEL_TRACES_EXPORTER') || exporter('OTEL_METRICS_EXPORTER')
    || set('OTEL_EXPORTER_OTLP_ENDPOINT') || set('OTEL_EXPORTER_OTLP_TRACES_ENDPOINT') || set('OTEL_EXPORTER_OTLP_METRICS_ENDPOINT')
}

/**
 * Starts the Node SDK from the environment (it registers the global tracer and meter providers,
 * the AsyncLocalStorage context manager and the propagators). `isStdoutProtocol`: stdout carries
 * MCP (a stdio server), so the `console` exporters, which print there, are refused.
 * @throws Error saying what to install when `@opentelemetry/sdk-node` or `@opentelemetry/api` is missing.
 */
export async function startOtel(isStdoutProtocol = false, env: NodeJS.ProcessEnv = process.env): Promise<OtelSdk> {
  const consoleIn = ['OTEL_TRACES_EXPORTER', 'OTEL_METRICS_EXPORTER', 'OTEL_LOGS_EXPORTER'].find(name => (env[name] ?? '').split(',').some(item => item.trim() === 'console'))
  if (isStdoutProtocol && consoleIn !== undefined) throw new Error(`${consoleIn}=console would print on stdout, which carries the protocol here: export over OTLP instead`)
  let NodeSDK: typeof import('@opentelemetry/sdk-node').NodeSDK
  let api: typeof import('@opentelemetry/api')
  try {
    api = await import('@opentelemetry/api')
    ;({ NodeSDK } = await import('@opentelemetry/sdk-node'))
  } catch (error) {
    throw new Error(OTEL_MISSING, { cause: error })
  }
  // OTEL_LOG_LEVEL makes the SDK log through the console, info and debug on stdout. Over stdio its
  // log goes to stderr instead: set here, and the variable hidden while the SDK is made (its
  // constructor would set the console logger, and log with it, itself).
  const level = env.OTEL_LOG_LEVEL?.trim().toUpperCase()
  const isLogRedirected = isStdoutProtocol && level !== undefined && level !== ''
  if (isLogRedirected) {
    const write = (...args: unknown[]) => { process.stderr.write(args.map(String).join(' ') + '\n') }
    const levels = api.DiagLogLevel as unknown as Record<string, number>
    api.diag.setLogger({ error: write, warn: write, info: write, debug: write, verbose: write }, { logLevel: levels[level] ?? api.DiagLogLevel.INFO })
  }
  const hidden = process.env.OTEL_LOG_LEVEL
  if (isLogRedirected) delete process.env.OTEL_LOG_LEVEL
  let sdk: InstanceType<typeof NodeSDK>
  try {
    sdk = new NodeSDK()
  } finally {
    if (isLogRedirected && hidden !== undefined) process.env.OTEL_LOG_LEVEL = hidden
  }
  sdk.start()
  let stopping: Promise<void> | undefined
  return {
    shutdown: () => stopping ??= sdk.shutdown().catch(error => {
      process.stderr.write(`rxmcp: telemetry shutdown: ${(error as Error).message}\n`)
    }),
  }
}
