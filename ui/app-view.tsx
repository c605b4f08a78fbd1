/**
 * The seam for MCP Apps (issue 28, the "apps" part): a tool whose `_meta.ui.resourceUri` names a
 * `ui://` resource gets its view rendered by the host-side bridge, which this page does not hold
 * yet. `plugAppBridge(createAppBridge)` (from host/app-bridge.ts once merged) turns it on; the
 * structural type below is the part of its options and result this page uses. Until then the
 * page shows the app's URI.
 *
 * CSP: the inspector page allows only its own scripts. A bridge whose sandbox proxy is a srcdoc
 * frame inherits that CSP; serve the proxy from another origin instead (`proxyUrl`, e.g.
 * `http://localhost:PORT/sandbox-proxy`: the API accepts only the printed origin
 * `http://127.0.0.1:PORT`, so the proxy's origin cannot reach it).
 */
import { useEffect, useRef, useState } from 'preact/hooks'
import type { JSX } from 'preact'
import { post } from './api.ts'

/** What this page gives the bridge factory (a subset of AppBridgeOptions). */
export interface AppBridgeSeamOptions {
  container: HTMLElement
  html: string
  meta?: any
  tool: any
  hostInfo: { name: string; version: string }
  callTool(name: string, args: Record<string, unknown>): Promise<any>
  readResource?(uri: string): Promise<any>
  consent(request: any): boolean | Promise<boolean>
  openLink?(url: string): void
  proxyUrl?: string
}

/** What it uses of the bridge. */
export interface AppBridgeSeam {
  sendToolInput(args: Record<string, unknown>): void
  sendToolResult(result: any): void
  close(): Promise<void>
}

/** The bridge factory, once plugged in. */
let createBridge: ((options: AppBridgeSeamOptions) => AppBridgeSeam) | undefined
/** Where the sandbox proxy is served (another origin than the page's), if anywhere. */
let proxyUrl: string | undefined

/** Turns MCP App rendering on. */
export function plugAppBridge(create: (options: AppBridgeSeamOptions) => AppBridgeSeam, options: { proxyUrl?: string } = {}): void {
  createBridge = create
  proxyUrl = options.proxyUrl
}

let nextAppCall = 1

/** A tool's app view after a call, or a note while no bridge is plugged in. */
export function AppView(props: { tool: any; resourceUri: string; input: Record<string, unknown>; result: any }): JSX.Element {
  const container = useRef<HTMLDivElement>(null)
  const [error, setError] = useState<string>()
  useEffect(() => {
    if (createBridge === undefined || container.current === null) return
    let bridge: AppBridgeSeam | undefined
    let isGone = false
    void post('read', { uri: props.resourceUri }).then(read => {
      const contents = read.contents?.[0]
      if (isGone || typeof contents?.text !== 'string') return
      bridge = createBridge!({
        container: container.current!,
        html: contents.text,
        meta: contents._meta?.ui,
        tool: props.tool,
        hostInfo: { name: 'rxmcp-inspector', version: '0.1.0' },
        callTool: async (name, args) => (await post('call', { callId: `app${nextAppCall++}`, name, arguments: args })).result,
        readResource: uri => post('read', { uri }),
        // The person sees every request the app makes leave its sandbox in the timeline; tool calls are asked.
        consent: request => request?.method !== 'tools/call' || window.confirm(`The app asks to call ${request?.params?.name ?? 'a tool'}. Allow?`),
        openLink: url => { window.open(url, '_blank', 'noopener,noreferrer') },
        proxyUrl,
      })
      bridge.sendToolInput(props.input)
      bridge.sendToolResult(props.result)
    }, failure => setError((failure as Error).message))
    return () => { isGone = true; void bridge?.close() }
  }, [props.resourceUri, props.result])
  if (createBridge === undefined) return <p class="muted" id="app-seam">This tool has an MCP App ({props.resourceUri}); the app bridge is not part of this build.</p>
  return <div class="app-view" id="app-view" ref={container}>{error ? <p class="error">{error}</p> : null}</div>
}
