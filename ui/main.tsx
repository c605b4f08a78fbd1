/** The web inspector's entry: styles in, the App rendered into #app. */
import { render } from 'preact'
import { App } from './app.tsx'
import styles from './style.css'

const style = document.createElement('style')
style.textContent = styles
document.head.append(style)
const root = document.getElementById('app')!
// The server's "Loading…" goes: render adds to what the element holds.
root.textContent = ''
render(<App />, root)
