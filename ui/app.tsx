/**
 * The web inspector's page: views of one MCP connection, fed by the event stream of
 * bin/inspect-ui.ts and acting through its API. Plain preact with hooks, no CSS framework.
 */
import { useEffect, useMemo, useReducer, useState } from 'preact/hooks'
import type { JSX } from 'preact'
import { events, post, type UiEvent } from './api.ts'
import { SchemaForm, initialValue, toValue, type Schema } from './schema-form.tsx'
import { ContentBlock, ResourceContents, ToolResult } from './content.tsx'
import { filterRows, pairFrames, type Frame } from './timeline.ts'
import { AppView } from './app-view.tsx'

/** What the stream told so far. */
interface Store {
  isOpen: boolean
  connection: any
  frames: Frame[]
  logs: { t: number; level: string; logger?: string; data: unknown }[]
  asks: { id: string; kind: string; params: any }[]
  progress: Record<string, { progress: number; total: number | null; message: string | null }>
  tasks: Record<string, any>
  updates: { t: number; uri: string }[]
  listChanged: number
  closed: boolean
}

const EMPTY: Store = { isOpen: false, connection: undefined, frames: [], logs: [], asks: [], progress: {}, tasks: {}, updates: [], listChanged: 0, closed: false }

function reduce(store: Store, event: UiEvent | { type: 'open'; isOpen: boolean }): Store {
  switch (event.type) {
    case 'open': return { ...store, isOpen: (event as any).isOpen }
    case 'connection': return { ...store, connection: event }
    case 'frame': return { ...store, frames: [...store.frames, { dir: event.dir, message: event.message, t: event.t }] }
    case 'ask': return { ...store, asks: [...store.asks, { id: event.id, kind: event.kind, params: event.params }] }
    case 'answered': return { ...store, asks: store.asks.filter(ask => ask.id !== event.id) }
    case 'progress': return { ...store, progress: { ...store.progress, [event.callId]: event as any } }
    case 'task': return { ...store, tasks: { ...store.tasks, [event.task.taskId]: { ...store.tasks[event.task.taskId], ...event.task, callId: event.callId } } }
    case 'closed': return { ...store, closed: true }
    case 'notification': {
      const params = event.params ?? {}
      if (event.method === 'notifications/message') return { ...store, logs: [...store.logs, { t: event.t, level: params.level, logger: params.logger, data: params.data }] }
      if (event.method === 'notifications/resources/updated') return { ...store, updates: [...store.updates, { t: event.t, uri: params.uri }] }
      if (event.method === 'notifications/tasks/status' && typeof params.taskId === 'string') return { ...store, tasks: { ...store.tasks, [params.taskId]: { ...store.tasks[params.taskId], ...params } } }
      if (event.method.endsWith('/list_changed')) return { ...store, listChanged: store.listChanged + 1 }
      return store
    }
    default: return store
  }
}

const TABS = ['Connection', 'Tools', 'Resources', 'Prompts', 'Skills', 'Tasks', 'Timeline', 'Logs'] as const
type Tab = typeof TABS[number]

/** The whole page. */
/**
 * `--config`: the host's servers, one page each (their own port and token); choosing one opens
 * its page. Nothing with one server.
 */
function ServerPicker(): JSX.Element | null {
  const [servers, setServers] = useState<{ current: string | null; servers: { name: string; url: string }[] }>()
  useEffect(() => { void post('servers').then(setServers, () => {}) }, [])
  if (servers === undefined || servers.servers.length < 2) return null
  return (
    <select id="server-picker" value={servers.current ?? ''} onChange={event => {
      const chosen = servers.servers.find(server => server.name === (event.currentTarget as HTMLSelectElement).value)
      if (chosen !== undefined) location.assign(chosen.url)
    }}>
      {servers.servers.map(server => <option key={server.name} value={server.name}>{server.name}</option>)}
    </select>
  )
}

export function App(): JSX.Element {
  const [store, dispatch] = useReducer(reduce, EMPTY)
  const [tab, setTab] = useState<Tab>(() => (TABS as readonly string[]).includes(location.hash.slice(1)) ? location.hash.slice(1) as Tab : 'Connection')
  useEffect(() => events(event => dispatch(event), isOpen => dispatch({ type: 'open', isOpen })), [])
  const choose = (next: Tab) => { setTab(next); history.replaceState(null, '', `${location.search}#${next}`) }
  const connection = store.connection
  return (
    <div class="app">
      <header>
        <strong>rxmcp inspector</strong>
        <ServerPicker />
        <span id="server-name">{connection ? `${connection.serverInfo?.title ?? connection.serverInfo?.name ?? '?'} ${connection.serverInfo?.version ?? ''}` : 'connecting…'}</span>
        {connection ? <span class="badge" id="era" data-era={connection.era}>{connection.era} · {connection.protocolVersion}</span> : null}
        <span class={store.closed ? 'badge bad' : store.isOpen ? 'badge ok' : 'badge'} id="link">{store.closed ? 'closed' : store.isOpen ? 'live' : 'offline'}</span>
      </header>
      <nav>{TABS.map(name => <button type="button" key={name} data-tab={name} class={tab === name ? 'active' : ''} onClick={() => choose(name)}>{name}</button>)}</nav>
      <Asks asks={store.asks} />
      <main>
        {tab === 'Connection' ? <ConnectionView connection={connection} /> : null}
        {tab === 'Tools' ? <ToolsView store={store} /> : null}
        {tab === 'Resources' ? <ResourcesView store={store} /> : null}
        {tab === 'Prompts' ? <PromptsView /> : null}
        {tab === 'Skills' ? <SkillsView /> : null}
        {tab === 'Tasks' ? <TasksView store={store} /> : null}
        {tab === 'Timeline' ? <TimelineView frames={store.frames} /> : null}
        {tab === 'Logs' ? <LogsView logs={store.logs} /> : null}
      </main>
    </div>
  )
}

/** A request's answer or its failure, for one button. */
function useCall<T>(): [{ value?: T; error?: string; isBusy: boolean }, (run: () => Promise<T>) => Promise<void>] {
  const [state, setState] = useState<{ value?: T; error?: string; isBusy: boolean }>({ isBusy: false })
  const run = async (work: () => Promise<T>) => {
    setState({ isBusy: true })
    try { setState({ value: await work(), isBusy: false }) } catch (error) { setState({ error: (error as Error).message, isBusy: false }) }
  }
  return [state, run]
}

/** A list fetched when the view opens, again on demand. */
function useList<T>(op: string, key: string): [T[], string | undefined, () => void] {
  const [list, setList] = useState<T[]>([])
  const [error, setError] = useState<string>()
  const load = () => { post(op).then(answer => { setList(answer[key] ?? []); setError(undefined) }, failure => setError(failure.message)) }
  useEffect(load, [])
  return [list, error, load]
}

function Json(props: { value: unknown; id?: string }) {
  return <pre class="json" id={props.id}>{JSON.stringify(props.value, null, 2)}</pre>
}

function ConnectionView(props: { connection: any }): JSX.Element {
  const connection = props.connection
  const [roots, setRoots] = useState<string>()
  const [ping, runPing] = useCall<number>()
  if (connection === undefined) return <p>Connecting…</p>
  const rootsText = roots ?? (connection.roots ?? []).map((root: any) => root.uri).join('\n')
  const saveRoots = () => post('roots', { roots: rootsText.split('\n').map((line: string) => line.trim()).filter(Boolean).map((uri: string) => ({ uri, name: uri.split('/').filter(Boolean).pop() ?? uri })) })
  return (
    <section id="connection" data-era={connection.era} data-version={connection.protocolVersion}>
      <dl>
        <dt>Transport</dt><dd id="transport">{connection.transport}</dd>
        <dt>Era</dt><dd>{connection.era}</dd>
        <dt>Revision</dt><dd id="revision">{connection.protocolVersion}</dd>
        <dt>Server</dt><dd>{connection.serverInfo?.name} {connection.serverInfo?.version}{connection.serverInfo?.title ? ` (${connection.serverInfo.title})` : ''}</dd>
        {connection.instructions ? <><dt>Instructions</dt><dd>{connection.instructions}</dd></> : null}
      </dl>
      <div class="columns">
        <div><h3>Server capabilities</h3><Json id="server-capabilities" value={connection.serverCapabilities} /></div>
        <div><h3>Client capabilities</h3><Json value={connection.clientCapabilities} /></div>
      </div>
      <h3>Roots (answered to the server's roots/list)</h3>
      <textarea id="roots" rows={3} placeholder="file:///a/folder, one per line" value={rootsText} onInput={event => setRoots((event.currentTarget as HTMLTextAreaElement).value)} />
      <div class="row">
        <button type="button" onClick={saveRoots}>Set roots</button>
        <button type="button" onClick={() => runPing(async () => { const start = performance.now(); await post('ping'); return Math.round(performance.now() - start) })}>Ping</button>
        {ping.value !== undefined ? <span>pong in {ping.value} ms</span> : null}{ping.error ? <span class="error">{ping.error}</span> : null}
      </div>
    </section>
  )
}

let nextCall = 1

function ToolsView(props: { store: Store }): JSX.Element {
  const [tools, error, reload] = useList<any>('tools', 'tools')
  const [selected, setSelected] = useState<string>()
  useEffect(() => { if (props.store.listChanged > 0) reload() }, [props.store.listChanged])
  const tool = tools.find(item => item.name === selected)
  return (
    <section class="split">
      <ul class="list" id="tools">
        {error ? <li class="error">{error}</li> : null}
        {tools.map(item => (
          <li key={item.name}><button type="button" data-tool={item.name} class={item.name === selected ? 'active' : ''} onClick={() => setSelected(item.name)}>
            {item.title ?? item.name}{item._meta?.ui?.resourceUri ? ' ▣' : ''}
          </button></li>
        ))}
      </ul>
      {tool ? <ToolPanel key={tool.name} tool={tool} store={props.store} /> : <p class="muted">Choose a tool.</p>}
    </section>
  )
}

function ToolPanel(props: { tool: any; store: Store }): JSX.Element {
  const { tool } = props
  const schema = (tool.inputSchema ?? { type: 'object' }) as Schema
  const [value, setValue] = useState(() => initialValue(schema))
  const [errors, setErrors] = useState<string[]>([])
  const [callId, setCallId] = useState<string>()
  const [outcome, setOutcome] = useState<{ result?: any; error?: string; cancelled?: boolean }>()
  const [input, setInput] = useState<unknown>()
  const canTask = tool.execution?.taskSupport === 'optional' || tool.execution?.taskSupport === 'required'
  const [asTask, setAsTask] = useState(tool.execution?.taskSupport === 'required')
  const progress = callId ? props.store.progress[callId] : undefined
  const task = callId ? Object.values(props.store.tasks).find((item: any) => item.callId === callId) : undefined
  const call = async (event: Event) => {
    event.preventDefault()
    const found: string[] = []
    const args = toValue(schema, value, '', found)
    setErrors(found)
    if (found.length > 0) return
    const id = `c${nextCall++}`
    setCallId(id)
    setOutcome(undefined)
    setInput(args)
    try {
      setOutcome(await post('call', { callId: id, name: tool.name, arguments: args, asTask }))
    } catch (failure) {
      setOutcome({ error: (failure as Error).message })
    }
  }
  const isRunning = callId !== undefined && outcome === undefined
  const resourceUri = tool._meta?.ui?.resourceUri as string | undefined
  return (
    <div class="panel" id="tool" data-tool={tool.name}>
      <h2>{tool.title ?? tool.name} <code>{tool.name}</code></h2>
      {tool.description ? <p>{tool.description}</p> : null}
      <form id="tool-form" onSubmit={call} noValidate>
        <SchemaForm schema={schema} value={value} onChange={setValue} />
        {errors.length > 0 ? <ul class="errors" id="form-errors">{errors.map(text => <li key={text}>{text}</li>)}</ul> : null}
        <div class="row">
          <button type="submit" id="call" disabled={isRunning}>Call</button>
          {canTask ? <label class="inline"><input type="checkbox" id="as-task" checked={asTask} onChange={event => setAsTask((event.currentTarget as HTMLInputElement).checked)} /> run as a task</label> : null}
          {isRunning ? <button type="button" id="cancel" onClick={() => task ? post('cancelTask', { taskId: (task as any).taskId }) : post('cancel', { callId })}>Cancel</button> : null}
        </div>
      </form>
      {isRunning || progress ? (
        <div class="progress" id="call-progress" data-progress={progress?.progress ?? ''} data-total={progress?.total ?? ''}>
          <progress max={progress?.total ?? undefined} value={progress?.progress}></progress>
          <span>{progress ? `${progress.progress}${progress.total !== null ? ` / ${progress.total}` : ''} ${progress.message ?? ''}` : 'running…'}</span>
        </div>
      ) : null}
      {task ? <p id="call-task">Task <code>{(task as any).taskId}</code>: <span class="status">{(task as any).status}</span> {(task as any).statusMessage ?? ''}</p> : null}
      {outcome?.cancelled ? <p id="cancelled" class="muted">Cancelled.</p> : null}
      {outcome?.error ? <p id="call-error" class="error">{outcome.error}</p> : null}
      {outcome?.result ? <ToolResult result={outcome.result} outputSchema={tool.outputSchema} /> : null}
      {resourceUri && outcome?.result ? <AppView tool={tool} resourceUri={resourceUri} input={(input ?? {}) as Record<string, unknown>} result={outcome.result} /> : null}
      <details><summary>Input schema</summary><Json value={tool.inputSchema} /></details>
      {tool.annotations ? <details><summary>Annotations</summary><Json value={tool.annotations} /></details> : null}
    </div>
  )
}

/** `{name}`, `{+name}`, `{?a,b}` and the rest of RFC 6570 expressions: their variable names. */
function templateVariables(template: string): string[] {
  const names: string[] = []
  for (const match of template.matchAll(/\{([+#./;?&]?)([^}]+)\}/g)) for (const name of match[2]!.split(',')) names.push(name.replace(/[*]|:\d+$/g, ''))
  return names
}

/** Expands a URI template with the values given (simple and reserved expansion, enough for the inspector). */
function expandTemplate(template: string, values: Record<string, string>): string {
  return template.replace(/\{([+#./;?&]?)([^}]+)\}/g, (_match, operator: string, list: string) => {
    const parts = list.split(',').map(name => name.replace(/[*]|:\d+$/g, ''))
    const encode = (text: string) => operator === '+' || operator === '#' ? encodeURI(text) : encodeURIComponent(text)
    if (operator === '?' || operator === '&') return (operator) + parts.map(name => `${name}=${encodeURIComponent(values[name] ?? '')}`).join('&')
    return (operator === '+' ? '' : operator) + parts.map(name => encode(values[name] ?? '')).join(',')
  })
}

function ResourcesView(props: { store: Store }): JSX.Element {
  const [resources, error] = useList<any>('resources', 'resources')
  const [templates, templateError] = useList<any>('templates', 'resourceTemplates')
  const [read, runRead] = useCall<any>()
  const [subscribed, setSubscribed] = useState<string[]>([])
  const [template, setTemplate] = useState<any>()
  const [values, setValues] = useState<Record<string, string>>({})
  const [suggestions, setSuggestions] = useState<Record<string, string[]>>({})
  const open = (uri: string) => runRead(() => post('read', { uri }))
  const toggle = async (uri: string) => {
    if (subscribed.includes(uri)) { await post('unsubscribe', { uri }); setSubscribed(subscribed.filter(item => item !== uri)) }
    else { await post('subscribe', { uri }); setSubscribed([...subscribed, uri]) }
  }
  const complete = async (name: string, value: string) => {
    setValues({ ...values, [name]: value })
    try {
      const answer = await post('complete', { params: { ref: { type: 'ref/resource', uri: template.uriTemplate }, argument: { name, value }, context: { arguments: values } } })
      setSuggestions({ ...suggestions, [name]: answer.completion?.values ?? [] })
    } catch { /* the server offers no completion */ }
  }
  const canSubscribe = props.store.connection?.serverCapabilities?.resources?.subscribe === true || props.store.connection?.era === 'modern'
  return (
    <section class="split">
      <div class="list">
        <h3>Resources</h3>
        {error ? <p class="error">{error}</p> : null}
        <ul id="resources">
          {resources.map(resource => (
            <li key={resource.uri} data-uri={resource.uri}>
              <button type="button" class="read" onClick={() => open(resource.uri)}>{resource.title ?? resource.name}</button>
              {canSubscribe ? <button type="button" class="subscribe" onClick={() => toggle(resource.uri)}>{subscribed.includes(resource.uri) ? 'Unsubscribe' : 'Subscribe'}</button> : null}
            </li>
          ))}
        </ul>
        <h3>Templates</h3>
        {templateError ? <p class="error">{templateError}</p> : null}
        <ul id="templates">
          {templates.map(item => <li key={item.uriTemplate}><button type="button" data-template={item.uriTemplate} onClick={() => { setTemplate(item); setValues({}); setSuggestions({}) }}>{item.title ?? item.name}</button></li>)}
        </ul>
      </div>
      <div class="panel">
        {template ? (
          <form id="template-form" onSubmit={event => { event.preventDefault(); void open(expandTemplate(template.uriTemplate, values)) }}>
            <h3><code>{template.uriTemplate}</code></h3>
            {templateVariables(template.uriTemplate).map(name => (
              <label class="field" key={name}><span>{name}</span>
                <input name={name} list={`complete-${name}`} value={values[name] ?? ''} onInput={event => void complete(name, (event.currentTarget as HTMLInputElement).value)} />
                <datalist id={`complete-${name}`}>{(suggestions[name] ?? []).map(option => <option key={option} value={option} />)}</datalist>
                <small class="suggestions" data-for={name}>{(suggestions[name] ?? []).slice(0, 10).join(' ')}</small>
              </label>
            ))}
            <button type="submit" id="read-template">Read</button>
          </form>
        ) : null}
        {read.isBusy ? <p>Reading…</p> : null}
        {read.error ? <p class="error">{read.error}</p> : null}
        {read.value ? <div id="read-result">{(read.value.contents ?? []).map((contents: any, index: number) => <ResourceContents key={index} contents={contents} />)}</div> : null}
        <h3>Updates</h3>
        <ul id="updates">{props.store.updates.map((update, index) => <li key={index} data-uri={update.uri}>{(update.t / 1000).toFixed(3)}s <code>{update.uri}</code> <button type="button" onClick={() => open(update.uri)}>Read</button></li>)}</ul>
      </div>
    </section>
  )
}

function PromptsView(): JSX.Element {
  const [prompts, error] = useList<any>('prompts', 'prompts')
  const [prompt, setPrompt] = useState<any>()
  const [values, setValues] = useState<Record<string, string>>({})
  const [suggestions, setSuggestions] = useState<Record<string, string[]>>({})
  const [got, runGet] = useCall<any>()
  const complete = async (name: string, value: string) => {
    const next = { ...values, [name]: value }
    setValues(next)
    try {
      const answer = await post('complete', { params: { ref: { type: 'ref/prompt', name: prompt.name }, argument: { name, value }, context: { arguments: values } } })
      setSuggestions(old => ({ ...old, [name]: answer.completion?.values ?? [] }))
    } catch { /* no completion for this argument */ }
  }
  return (
    <section class="split">
      <ul class="list" id="prompts">
        {error ? <li class="error">{error}</li> : null}
        {prompts.map(item => <li key={item.name}><button type="button" data-prompt={item.name} onClick={() => { setPrompt(item); setValues({}); setSuggestions({}) }}>{item.title ?? item.name}</button></li>)}
      </ul>
      <div class="panel">
        {prompt ? (
          <form id="prompt-form" onSubmit={event => { event.preventDefault(); void runGet(() => post('prompt', { name: prompt.name, arguments: values })) }}>
            <h2>{prompt.title ?? prompt.name}</h2>
            {prompt.description ? <p>{prompt.description}</p> : null}
            {(prompt.arguments ?? []).map((argument: any) => (
              <label class="field" key={argument.name}><span>{argument.name}{argument.required ? ' *' : ''}</span>
                <input name={argument.name} list={`prompt-${argument.name}`} required={argument.required} value={values[argument.name] ?? ''}
                  onInput={event => void complete(argument.name, (event.currentTarget as HTMLInputElement).value)} />
                <datalist id={`prompt-${argument.name}`}>{(suggestions[argument.name] ?? []).map(option => <option key={option} value={option} />)}</datalist>
                <small class="suggestions" data-for={argument.name}>{(suggestions[argument.name] ?? []).slice(0, 10).join(' ')}</small>
              </label>
            ))}
            <button type="submit" id="get-prompt">Get</button>
          </form>
        ) : <p class="muted">Choose a prompt.</p>}
        {got.error ? <p class="error">{got.error}</p> : null}
        {got.value ? (
          <div id="prompt-result">
            {(got.value.messages ?? []).map((message: any, index: number) => (
              <div class="message" key={index}><strong>{message.role}</strong>
                {(Array.isArray(message.content) ? message.content : [message.content]).map((block: any, at: number) => <ContentBlock key={at} block={block} />)}
              </div>
            ))}
          </div>
        ) : null}
      </div>
    </section>
  )
}

function SkillsView(): JSX.Element {
  const [skills, error] = useList<any>('skills', 'skills')
  const [loaded, runLoad] = useCall<any>()
  return (
    <section class="split">
      <ul class="list" id="skills">
        {error ? <li class="error">{error}</li> : null}
        {skills.length === 0 && !error ? <li class="muted">The server offers no skills.</li> : null}
        {skills.map(skill => (
          <li key={skill.uri}><button type="button" data-skill={skill.uri} onClick={() => runLoad(() => post('skill', { uri: skill.uri }))}>{String(skill.frontmatter?.name ?? skill.uri)}</button>
            <small>{String(skill.frontmatter?.description ?? '')}</small></li>
        ))}
      </ul>
      <div class="panel">
        {loaded.error ? <p class="error">{loaded.error}</p> : null}
        {loaded.value ? <Json id="skill" value={loaded.value.skill} /> : <p class="muted">Load a skill to see its files (verified against their digests).</p>}
      </div>
    </section>
  )
}

function TasksView(props: { store: Store }): JSX.Element {
  const [listed, setListed] = useState<any[]>([])
  const [error, setError] = useState<string>()
  const [result, runResult] = useCall<any>()
  const refresh = () => post('tasks').then(answer => { setListed(answer.tasks ?? []); setError(undefined) }, failure => setError(failure.message))
  const tasks = useMemo(() => {
    const all: Record<string, any> = {}
    for (const task of listed) all[task.taskId] = task
    for (const task of Object.values(props.store.tasks)) all[task.taskId] = { ...all[task.taskId], ...task }
    return Object.values(all)
  }, [listed, props.store.tasks])
  return (
    <section>
      <div class="row"><button type="button" id="refresh-tasks" onClick={refresh}>List tasks</button>{error ? <span class="error">{error}</span> : null}</div>
      <table id="tasks"><thead><tr><th>Task</th><th>Status</th><th>Message</th><th>Updated</th><th /></tr></thead>
        <tbody>{tasks.map(task => (
          <tr key={task.taskId} data-task={task.taskId} data-status={task.status}>
            <td><code>{task.taskId}</code></td><td>{task.status}</td><td>{task.statusMessage ?? ''}</td><td>{task.lastUpdatedAt ?? ''}</td>
            <td>
              {task.status === 'working' || task.status === 'input_required' ? <button type="button" onClick={() => post('cancelTask', { taskId: task.taskId })}>Cancel</button> : null}
              {task.status === 'completed' || task.status === 'failed' ? <button type="button" onClick={() => runResult(() => post('taskResult', { taskId: task.taskId }))}>Result</button> : null}
            </td>
          </tr>
        ))}</tbody>
      </table>
      {result.error ? <p class="error">{result.error}</p> : null}
      {result.value ? <ToolResult result={result.value} /> : null}
    </section>
  )
}

function TimelineView(props: { frames: Frame[] }): JSX.Element {
  const [filter, setFilter] = useState({ text: '', dir: 'all', kind: 'all' })
  const [open, setOpen] = useState<string>()
  const rows = useMemo(() => pairFrames(props.frames), [props.frames])
  const shown = filterRows(rows, filter)
  const set = (key: string) => (event: Event) => { const value = (event.currentTarget as HTMLInputElement).value; setFilter(old => ({ ...old, [key]: value })) }
  return (
    <section>
      <div class="row filters">
        <input id="timeline-filter" placeholder="filter: method or text" value={filter.text} onInput={set('text')} />
        <select id="timeline-dir" value={filter.dir} onChange={set('dir')}><option value="all">both ways</option><option value="out">sent</option><option value="in">received</option></select>
        <select id="timeline-kind" value={filter.kind} onChange={set('kind')}><option value="all">all</option><option value="request">requests</option><option value="notification">notifications</option><option value="response">unpaired responses</option></select>
        <span class="muted">{shown.length} of {rows.length}</span>
      </div>
      <table id="timeline">
        <thead><tr><th>at</th><th /><th>method</th><th>id</th><th>took</th></tr></thead>
        <tbody>{shown.map(row => [
          <tr key={row.key} data-method={row.method} data-kind={row.kind} data-dir={row.dir} data-paired={String(row.response !== undefined)}
            class={row.isError ? 'error' : ''} onClick={() => setOpen(open === row.key ? undefined : row.key)}>
            <td>{(row.t / 1000).toFixed(3)}s</td><td>{row.dir === 'out' ? '→' : '←'}</td><td>{row.method} <span class="muted">{summaryOf(row.message)}</span></td><td>{row.id ?? ''}</td>
            <td>{row.kind === 'request' ? row.ms === undefined ? 'pending' : `${row.ms} ms` : ''}</td>
          </tr>,
          open === row.key ? <tr key={`${row.key}-open`} class="detail"><td colSpan={5}><div class="columns"><Json value={row.message} />{row.response ? <Json value={row.response} /> : null}</div></td></tr> : null,
        ])}</tbody>
      </table>
    </section>
  )
}

/** What names a message among its kind: a tool or prompt name, a URI, a progress count. */
function summaryOf(message: any): string {
  const params = message?.params ?? {}
  if (typeof params.name === 'string') return params.name
  if (typeof params.uri === 'string') return params.uri
  if (typeof params.progress === 'number') return `${params.progress}${params.total !== undefined ? `/${params.total}` : ''}`
  if (typeof params.level === 'string') return params.level
  return ''
}

const LEVELS = ['debug', 'info', 'notice', 'warning', 'error', 'critical', 'alert', 'emergency']

function LogsView(props: { logs: Store['logs'] }): JSX.Element {
  const [level, setLevel] = useState('debug')
  const [error, setError] = useState<string>()
  const change = (event: Event) => {
    const next = (event.currentTarget as HTMLSelectElement).value
    setLevel(next)
    post('level', { level: next }).then(() => setError(undefined), failure => setError(failure.message))
  }
  const shown = props.logs.filter(log => LEVELS.indexOf(log.level) >= LEVELS.indexOf(level))
  return (
    <section>
      <div class="row"><label>Level <select id="log-level" value={level} onChange={change}>{LEVELS.map(name => <option key={name}>{name}</option>)}</select></label>{error ? <span class="error">{error}</span> : null}</div>
      <table id="logs"><tbody>{shown.map((log, index) => (
        <tr key={index} class={`level-${log.level}`} data-level={log.level}><td>{(log.t / 1000).toFixed(3)}s</td><td>{log.level}</td><td>{log.logger ?? ''}</td><td><code>{typeof log.data === 'string' ? log.data : JSON.stringify(log.data)}</code></td></tr>
      ))}</tbody></table>
    </section>
  )
}

/** The server's open asks (elicitation, sampling), each answered here by the person. */
function Asks(props: { asks: Store['asks'] }): JSX.Element | null {
  if (props.asks.length === 0) return null
  return <aside id="asks">{props.asks.map(ask => <Ask key={ask.id} ask={ask} />)}</aside>
}

function Ask(props: { ask: Store['asks'][number] }): JSX.Element {
  const { ask } = props
  const answer = (body: object) => post('answer', { id: ask.id, ...body })
  if (ask.kind === 'elicitation') return <ElicitationAsk ask={ask} answer={answer} />
  if (ask.kind === 'elicitation-url') {
    return (
      <div class="ask" data-kind={ask.kind}>
        <h3>The server asks you to open a URL</h3><p>{ask.params.message}</p>
        <p><a href={ask.params.url} target="_blank" rel="noopener noreferrer">{ask.params.url}</a></p>
        <div class="row">
          <button type="button" class="accept" onClick={() => answer({ result: { action: 'accept' } })}>Opened it</button>
          <button type="button" class="decline" onClick={() => answer({ result: { action: 'decline' } })}>Decline</button>
          <button type="button" class="cancel" onClick={() => answer({ result: { action: 'cancel' } })}>Cancel</button>
        </div>
      </div>
    )
  }
  return <SamplingAsk ask={ask} answer={answer} />
}

function ElicitationAsk(props: { ask: Store['asks'][number]; answer: (body: object) => Promise<unknown> }): JSX.Element {
  const schema = props.ask.params.requestedSchema as Schema
  const [value, setValue] = useState(() => initialValue(schema))
  const [errors, setErrors] = useState<string[]>([])
  const accept = (event: Event) => {
    event.preventDefault()
    const found: string[] = []
    const content = toValue(schema, value, '', found)
    setErrors(found)
    if (found.length === 0) void props.answer({ result: { action: 'accept', content } })
  }
  return (
    <form class="ask" data-kind="elicitation" onSubmit={accept} noValidate>
      <h3>The server asks</h3><p>{props.ask.params.message}</p>
      <SchemaForm schema={schema} value={value} onChange={setValue} />
      {errors.length > 0 ? <ul class="errors">{errors.map(text => <li key={text}>{text}</li>)}</ul> : null}
      <div class="row">
        <button type="submit" class="accept">Accept</button>
        <button type="button" class="decline" onClick={() => props.answer({ result: { action: 'decline' } })}>Decline</button>
        <button type="button" class="cancel" onClick={() => props.answer({ result: { action: 'cancel' } })}>Cancel</button>
      </div>
    </form>
  )
}

function SamplingAsk(props: { ask: Store['asks'][number]; answer: (body: object) => Promise<unknown> }): JSX.Element {
  const params = props.ask.params
  const [text, setText] = useState('')
  const [model, setModel] = useState('person-in-the-inspector')
  return (
    <div class="ask" data-kind="sampling">
      <h3>The server asks for a completion (sampling)</h3>
      {params.systemPrompt ? <p><em>{params.systemPrompt}</em></p> : null}
      {(params.messages ?? []).map((message: any, index: number) => (
        <div class="message" key={index}><strong>{message.role}</strong>
          {(Array.isArray(message.content) ? message.content : [message.content]).map((block: any, at: number) => <ContentBlock key={at} block={block} />)}
        </div>
      ))}
      <p class="muted">maxTokens {params.maxTokens}</p>
      <textarea name="completion" rows={3} placeholder="The assistant's answer" value={text} onInput={event => setText((event.currentTarget as HTMLTextAreaElement).value)} />
      <label class="field"><span>Model</span><input name="model" value={model} onInput={event => setModel((event.currentTarget as HTMLInputElement).value)} /></label>
      <div class="row">
        <button type="button" class="accept" onClick={() => props.answer({ result: { role: 'assistant', content: { type: 'text', text }, model, stopReason: 'endTurn' } })}>Send</button>
        <button type="button" class="decline" onClick={() => props.answer({ error: 'The person declined to sample' })}>Refuse</button>
      </div>
    </div>
  )
}
