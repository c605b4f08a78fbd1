/** The web inspector's entry: styles in, the MCP App bridge plugged in, the App rendered into #app. */
import { render } from 'preact'
import { App } from './app.tsx'
import { plugAppBridge } from './app-view.tsx'
import { createAppBridge } from '../host/app-bridge.ts'
import styles from './style.css'

const style = document.createElement('style')
style.textContent = styles
document.head.append(style)
// An app's sandbox proxy comes from another origin of the same listener (localhost, not the
// page's 127.0.0.1), which the API refuses; see bin/inspect-ui.ts.
plugAppBridge(createAppBridge, { proxyUrl: `http://localhost:${location.port}/sandbox-proxy` })
const root = document.getElementById('app')!
// The server's "Loading…" goes: render adds to what the element holds.
root.textContent = ''
render(<App />, root)
