/**
 * MCP Apps in the page (issue 28): a tool whose `_meta.ui.resourceUri` names a `ui://` resource
 * gets its view rendered by the host-side bridge after a call. `plugAppBridge(createAppBridge, { proxyUrl })` (ui/main.tsx, host/app-bridge.ts) turns it on; the
 * structural type below is the part of its options and result this page uses. Without it the
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
  message?(params: any): void
  updateModelContext?(params: any): void
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

/** A request of the app waiting for the person's answer in the page. */
interface PendingConsent { request: any; answer(isAllowed: boolean): void }

/** The text of what the app sent (its text blocks, else its JSON). */
function textOf(params: any): string {
  const content = Array.isArray(params?.content) ? params.content : []
  const texts = content.filter((block: any) => typeof block?.text === 'string').map((block: any) => block.text)
  return texts.length > 0 ? texts.join(' ') : JSON.stringify(params ?? {})
}

/** How a request of the app reads in the consent prompt. */
function describeRequest(request: any): string {
  if (request?.kind === 'tools/call') return `call the tool ${request.name} with ${JSON.stringify(request.arguments ?? {})}`
  if (request?.kind === 'open-link') return `open ${request.url}`
  if (request?.kind === 'resources/read') return `read ${request.uri}`
  return `${request?.kind ?? 'do something'}: ${JSON.stringify(request?.params ?? {})}`
}

/**
 * A tool's app view after a call, or a note while no bridge is plugged in. Every request of the
 * app that leaves its sandbox (its tool calls, links, reads) waits for the person: Allow or Deny.
 */
export function AppView(props: { tool: any; resourceUri: string; input: Record<string, unknown>; result: any }): JSX.Element {
  const container = useRef<HTMLDivElement>(null)
  const [error, setError] = useState<string>()
  const [pending, setPending] = useState<PendingConsent[]>([])
  // What the app sent for the conversation (ui/message) or the model's context, once allowed: shown, as a chat host would add it.
  const [sent, setSent] = useState<string[]>([])
  useEffect(() => {
    if (createBridge === undefined || container.current === null) return
    let bridge: AppBridgeSeam | undefined
    let isGone = false
    const ask = (request: any) => new Promise<boolean>(resolve => {
      const entry: PendingConsent = {
        request,
        answer: isAllowed => { setPending(list => list.filter(other => other !== entry)); resolve(isAllowed) },
      }
      setPending(list => [...list, entry])
    })
    void post('read', { uri: props.resourceUri }).then(read => {
      const contents = read.contents?.find((entry: any) => typeof entry?.text === 'string') ?? read.contents?.[0]
      if (isGone || container.current === null) return
      if (typeof contents?.text !== 'string') { setError(`${props.resourceUri} has no text to render`); return }
      bridge = createBridge!({
        container: container.current,
        html: contents.text,
        meta: contents._meta?.ui,
        tool: props.tool,
        hostInfo: { name: 'rxmcp-inspector', version: '0.1.0' },
        callTool: async (name, args) => {
          const answer = await post('call', { callId: `app${nextAppCall++}`, name, arguments: args })
          if (answer.result === undefined) throw new Error('The call was cancelled')
          return answer.result
        },
        readResource: uri => post('read', { uri }),
        consent: request => ask(request),
        openLink: url => { window.open(url, '_blank', 'noopener,noreferrer') },
        message: params => setSent(list => [...list, `message: ${textOf(params)}`]),
        updateModelContext: params => setSent(list => [...list, `model context: ${textOf(params)}`]),
        proxyUrl,
      })
      bridge.sendToolInput(props.input)
      bridge.sendToolResult(props.result)
    }, failure => setError((failure as Error).message))
    return () => {
      isGone = true
      // Requests still asked go unanswered: deny them with the view.
      setPending(list => { for (const entry of list) queueMicrotask(() => entry.answer(false)); return [] })
      void bridge?.close()
    }
  }, [props.resourceUri, props.result])
  if (createBridge === undefined) return <p class="muted" id="app-seam">This tool has an MCP App ({props.resourceUri}); the app bridge is not part of this build.</p>
  return (
    <div class="app-view-panel">
      <h3>App <code>{props.resourceUri}</code></h3>
      {pending.map((entry, index) => (
        <div class="ask" id={index === 0 ? 'app-consent' : undefined} data-kind={entry.request?.kind} key={index}>
          <p>The app asks to {describeRequest(entry.request)}.</p>
          <div class="row">
            <button type="button" id={index === 0 ? 'app-allow' : undefined} onClick={() => entry.answer(true)}>Allow</button>
            <button type="button" id={index === 0 ? 'app-deny' : undefined} onClick={() => entry.answer(false)}>Deny</button>
          </div>
        </div>
      ))}
      {error ? <p class="error" id="app-error">{error}</p> : null}
      {sent.length > 0 ? <ul id="app-messages">{sent.map((line, index) => <li key={index}>{line}</li>)}</ul> : null}
      <div class="app-view" id="app-view" ref={container}></div>
    </div>
  )
}
