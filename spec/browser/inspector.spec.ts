// The web inspector (`rxmcp inspect --ui`) in headless Chromium: against our everything example in
// both eras (the client forced to each), and against @modelcontextprotocol/server-everything over
// stdio; once through the command itself, run from sources with tsx. The modern run writes the
// screenshots in docs/images/ (so the README's pictures stay true).
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createRequire } from 'node:module'
import { keepPicture } from './pictures.ts'
import { fileURLToPath } from 'node:url'
import { join } from 'node:path'
import { connect } from '../../actors/client.ts'
import { createMemoryPair } from '../../transports/memory.ts'
import { stdioClient } from '../../transports/stdio.ts'
import { createEverythingServer } from '../../examples/everything/everything.ts'
import { createServer } from '../../actors/server.ts'
import { registerTaskFixtures } from '../../examples/conformance/task-fixtures.ts'
import { registerSkillFixtures } from '../../examples/conformance/skill-fixtures.ts'
import { serveInspectorUi, type InspectorUi } from '../../bin/inspect-ui.ts'
import { openPage, type HeadlessPage } from './chromium.ts'
import { showInspector } from './inspector-command.ts'

// Generous: two shared cores may be busy with other suites while Chromium starts.
const WAIT_MS = 60_000
const root = fileURLToPath(new URL('../..', import.meta.url))
const images = join(root, 'docs', 'images')
const everythingBin = createRequire(import.meta.url).resolve('@modelcontextprotocol/server-everything/dist/index.js')

/** Helpers put into each page: set a field as a person types, click, read text. */
const HELPERS = `window.t = {
  $: s => document.querySelector(s),
  set(selector, value) {
    const el = document.querySelector(selector)
    if (!el) throw new Error('no ' + selector)
    el.value = value
    el.dispatchEvent(new Event('input', { bubbles: true }))
    el.dispatchEvent(new Event('change', { bubbles: true }))
    return true
  },
  click(selector) {
    const el = document.querySelector(selector)
    if (!el) throw new Error('no ' + selector)
    el.click()
    return true
  },
  text: s => document.querySelector(s)?.textContent ?? '',
  api: (op, body) => fetch('/api/' + op, { method: 'POST', headers: { 'content-type': 'application/json', 'x-rxmcp-token': document.body.dataset.token }, body: JSON.stringify(body) }).then(r => r.json()),
}; true`

let page: HeadlessPage | undefined

beforeAll(async () => {
  page = await openPage('about:blank', { startTimeoutMs: WAIT_MS, viewport: { width: 1200, height: 760 } })
}, 2 * WAIT_MS)
afterAll(async () => { await page?.close() }, 60_000)

/** Opens the inspector at `url` in the browser and waits for its connection view. */
async function visit(url: string): Promise<HeadlessPage> {
  const current = page!
  await showInspector(current, url, WAIT_MS)
  await current.evaluate(HELPERS)
  return current
}

const until = <T = unknown>(expression: string) => page!.waitFor<T>(expression, WAIT_MS)
const run = <T = unknown>(expression: string) => page!.evaluate<T>(expression)
const tab = async (name: string) => { await run(`t.click('[data-tab="${name}"]')`) }
const shoot = async (name: string | undefined) => {
  if (name === undefined) return
  // A frame for the last render to reach the screen.
  await run('new Promise(resolve => requestAnimationFrame(() => requestAnimationFrame(() => resolve(true))))')
  keepPicture(join(images, `inspector-${name}.png`), await page!.screenshot())
}

/** Our everything server in this process, the inspector's client forced to `era`. */
async function everythingUi(era: 'legacy' | 'modern'): Promise<{ ui: InspectorUi; close: () => Promise<void> }> {
  const server = createEverythingServer()
  const [clientEnd, serverEnd] = createMemoryPair({ serialize: true })
  await server.listen(serverEnd)
  const ui = await serveInspectorUi({
    transport: 'memory (examples/everything in-process)',
    roots: [{ uri: 'file:///work/project', name: 'project' }],
    connect: options => connect(clientEnd, { name: 'rxmcp-inspector', version: '0.1.0' }, { ...options, era }),
  })
  return { ui, close: async () => { await ui.close(); await server.close() } }
}

describe('rxmcp inspect --ui in headless Chromium', () => {
  it.each([['legacy', undefined], ['modern', 'shots']] as const)('drives examples/everything in the %s era: connection, a tool by its form, progress and cancel, elicitation, sampling and roots, results by content type, a template with completion, a subscription update, a prompt, logs, and the paired timeline', async (era, shots) => {
    const { ui, close } = await everythingUi(era)
    const shot = (name: string) => shoot(shots && name)
    try {
      await visit(ui.url)
      await until(`t.$('#connection').dataset.era === '${era}'`)
      expect(await run(`t.text('#revision')`)).toBe(era === 'modern' ? '2026-07-28' : '2025-11-25')
      await until(`t.text('#server-capabilities').includes('"tools"')`)
      await shot('connection')

      // A tool from its form: validated before sending, then called.
      await tab('Tools')
      await until(`t.$('[data-tool="add"]')`)
      await run(`t.click('[data-tool="add"]')`)
      await until(`t.$('#tool[data-tool="add"] [name="a"]')`)
      await run(`t.set('[name="a"]', '2')`)
      await run(`t.click('#call')`)
      expect(await until<string>(`t.text('#form-errors')`)).toContain('b is required')
      await run(`t.set('[name="b"]', '3')`)
      await run(`t.click('#call')`)
      await until(`t.text('#structured').includes('"sum": 5')`)

      // Progress as a bar, then cancel.
      await run(`t.click('[data-tool="long_running"]')`)
      await until(`t.$('#tool[data-tool="long_running"] [name="steps"]')`)
      expect(await run(`t.$('[name="steps"]').value`)).toBe('5')
      await run(`t.set('[name="steps"]', '400'); t.set('[name="ms"]', '50')`)
      await run(`t.click('#call')`)
      await until(`Number(t.$('#call-progress')?.dataset.progress) >= 2`)
      expect(await run(`t.$('#call-progress').dataset.total`)).toBe('400')
      await shot('tool-progress')
      await run(`t.click('#cancel')`)
      await until(`t.$('#cancelled')`)

      // Elicitation answered in the page.
      await run(`t.click('[data-tool="elicit"]')`)
      await until(`t.$('#tool[data-tool="elicit"]')`)
      await run(`t.click('#call')`)
      await until(`t.$('.ask[data-kind="elicitation"] [name="name"]')`)
      await run(`t.set('.ask [name="name"]', 'Ada')`)
      await shot('elicitation')
      await run(`t.click('.ask .accept')`)
      await until(`t.text('#structured').includes('"Ada"')`)
      expect(JSON.parse(await run<string>(`t.text('#structured')`))).toEqual({ action: 'accept', content: { name: 'Ada', age: 30, color: 'green', extras: ['tea'] } })

      // Sampling answered in the page.
      await run(`t.click('[data-tool="sample"]')`)
      await until(`t.$('#tool[data-tool="sample"] [name="prompt"]')`)
      await run(`t.set('[name="prompt"]', 'Say hi')`)
      await run(`t.click('#call')`)
      await until(`t.$('.ask[data-kind="sampling"] [name="completion"]')`)
      expect(await run(`t.text('.ask[data-kind="sampling"] .message')`)).toContain('Say hi')
      await run(`t.set('.ask [name="completion"]', 'hi there')`)
      await run(`t.click('.ask .accept')`)
      await until(`t.text('#result').includes('person-in-the-inspector: hi there')`)

      // Roots answered from the page's list.
      await run(`t.click('[data-tool="roots"]')`)
      await until(`t.$('#tool[data-tool="roots"]')`)
      await run(`t.click('#call')`)
      await until(`t.text('#result').includes('file:///work/project')`)

      // Results by content type.
      await run(`t.click('[data-tool="content_types"]')`)
      await until(`t.$('#tool[data-tool="content_types"]')`)
      await run(`t.click('#call')`)
      await until(`t.$('#result img.content.image')`)
      expect(await run(`[...t.$('#result').children].map(el => el.className)`)).toEqual(['content text', 'content image', 'content audio', 'content link', 'content resource'])
      expect(await run(`t.$('#result img').naturalWidth`)).toBe(1)
      expect(await run(`t.text('#result .content.resource')`)).toContain('Static resource 1')

      // A template read with completion, then a subscription update.
      await tab('Resources')
      await until(`t.$('[data-template="everything://items/{id}"]')`)
      await run(`t.click('[data-template="everything://items/{id}"]')`)
      await until(`t.$('#template-form [name="id"]')`)
      await run(`t.set('#template-form [name="id"]', '4')`)
      await until(`t.text('.suggestions[data-for="id"]').split(' ').includes('42')`)
      await run(`t.set('#template-form [name="id"]', '42')`)
      await run(`t.click('#read-template')`)
      await until(`t.text('#read-result').includes('Item 42')`)
      await run(`t.click('#resources li[data-uri="everything://readme"] .subscribe')`)
      await until(`t.text('#resources li[data-uri="everything://readme"] .subscribe') === 'Unsubscribe'`)
      await run(`t.api('call', { callId: 'touch', name: 'touch', arguments: { uri: 'everything://readme' } })`)
      await until(`t.$('#updates li[data-uri="everything://readme"]')`)
      await shot('resources')

      // A prompt with argument completion.
      await tab('Prompts')
      await until(`t.$('[data-prompt="greeting"]')`)
      await run(`t.click('[data-prompt="greeting"]')`)
      await until(`t.$('#prompt-form [name="name"]')`)
      await run(`t.set('#prompt-form [name="name"]', 'Gr')`)
      await until(`t.text('.suggestions[data-for="name"]') === 'Grace'`)
      await run(`t.set('#prompt-form [name="name"]', 'Grace')`)
      await run(`t.click('#get-prompt')`)
      await until(`t.text('#prompt-result').includes('Say hello to Grace')`)

      // Logs at a chosen level.
      await tab('Logs')
      await until(`t.$('#log-level')`)
      await run(`t.set('#log-level', 'info')`)
      await run(`t.api('call', { callId: 'log1', name: 'log', arguments: { level: 'debug', message: 'quiet' } })`)
      await run(`t.api('call', { callId: 'log2', name: 'log', arguments: { level: 'warning', message: 'watch out' } })`)
      await until(`t.text('#logs').includes('watch out')`)
      expect(await run(`t.text('#logs')`)).not.toContain('quiet')

      // The timeline: each request paired with its response, filterable.
      await tab('Timeline')
      await until(`t.$('#timeline tr[data-method="tools/call"][data-paired="true"]')`)
      await run(`t.set('#timeline-filter', 'tools/call'); t.set('#timeline-kind', 'request')`)
      await until(`[...document.querySelectorAll('#timeline tbody tr')].every(tr => tr.dataset.method === 'tools/call')`)
      const calls = await run<Array<{ paired: string; took: string }>>(`[...document.querySelectorAll('#timeline tbody tr')].map(tr => ({ paired: tr.dataset.paired, took: tr.cells[4].textContent }))`)
      // add (once refused by the form, so only once sent), long_running (cancelled: no response), elicit, sample, roots,
      // content_types, touch, log, log; in the modern era elicit, sample and roots go twice: answered input_required,
      // then again with the answers.
      expect(calls).toHaveLength(era === 'modern' ? 12 : 9)
      expect(calls.filter(call => call.paired === 'false')).toHaveLength(1)
      for (const call of calls.filter(call => call.paired === 'true')) expect(call.took).toMatch(/^\d+ ms$/)
      await run(`t.set('#timeline-filter', 'cancelled'); t.set('#timeline-kind', 'notification')`)
      await until(`t.$('#timeline tr[data-method="notifications/cancelled"][data-dir="out"]')`)
      await run(`t.set('#timeline-filter', ''); t.set('#timeline-kind', 'all')`)
      await shot('timeline')
      expect(page!.log.filter(line => line.startsWith('exception'))).toEqual([])
    } finally {
      await close()
    }
  }, 5 * WAIT_MS)

  it('drives @modelcontextprotocol/server-everything over stdio: a tool by its form, progress and cancel, an elicitation declined, a URL elicitation accepted, a template read, the paired timeline', async () => {
    const ui = await serveInspectorUi({
      transport: `stdio: node ${everythingBin} stdio`,
      connect: options => connect(stdioClient({ command: process.execPath, args: [everythingBin, 'stdio'], stderr: 'ignore' }), { name: 'rxmcp-inspector', version: '0.1.0' }, options),
    })
    try {
      await visit(ui.url)
      await until(`t.$('#connection').dataset.era`)
      expect(await run(`t.text('#transport')`)).toContain('stdio: node')
      await tab('Tools')
      await until(`t.$('[data-tool="get-sum"]')`)
      await run(`t.click('[data-tool="get-sum"]')`)
      await until(`t.$('[name="a"]')`)
      await run(`t.set('[name="a"]', '20'); t.set('[name="b"]', '22')`)
      await run(`t.click('#call')`)
      await until(`t.text('#result').includes('42')`)

      await run(`t.click('[data-tool="trigger-long-running-operation"]')`)
      await until(`t.$('#tool[data-tool="trigger-long-running-operation"] [name="steps"]')`)
      await run(`t.set('[name="duration"]', '60'); t.set('[name="steps"]', '60')`)
      await run(`t.click('#call')`)
      await until(`Number(t.$('#call-progress')?.dataset.progress) >= 1`)
      await run(`t.click('#cancel')`)
      await until(`t.$('#cancelled')`)

      await run(`t.click('[data-tool="trigger-elicitation-request"]')`)
      await until(`t.$('#tool[data-tool="trigger-elicitation-request"]')`)
      await run(`t.click('#call')`)
      await until(`t.$('.ask[data-kind="elicitation"]')`)
      await run(`t.click('.ask .decline')`)
      await until(`t.text('#result').toLowerCase().includes('decline')`)

      // A URL elicitation: the link shown, "Opened it" answered accept.
      await run(`t.click('[data-tool="trigger-url-elicitation"]')`)
      await until(`t.$('#tool[data-tool="trigger-url-elicitation"] [name="url"]')`)
      await run(`t.set('#tool [name="url"]', 'https://example.com/consent')`)
      await run(`t.click('#call')`)
      await until(`t.$('.ask[data-kind="elicitation-url"] a')?.getAttribute('href') === 'https://example.com/consent'`)
      await run(`t.click('.ask[data-kind="elicitation-url"] .accept')`)
      await until(`t.text('#result').includes('completed the URL elicitation')`)

      await tab('Resources')
      await until(`t.$('#templates [data-template]')`)
      await run(`t.click('#templates [data-template*="text"]')`)
      await until(`t.$('#template-form [name="resourceId"]')`)
      await run(`t.set('#template-form [name="resourceId"]', '1')`)
      await run(`t.click('#read-template')`)
      await until(`t.$('#read-result .resource')`)

      await tab('Timeline')
      await until(`t.$('#timeline tr[data-method="resources/read"][data-paired="true"]')`)
      await until(`t.$('#timeline tr[data-method="elicitation/create"][data-dir="in"][data-paired="true"]')`)
      expect(page!.log.filter(line => line.startsWith('exception'))).toEqual([])
    } finally {
      await ui.close()
    }
  }, 5 * WAIT_MS)

  it.each(['legacy', 'modern'] as const)('runs a tool as a task and follows it in the Tasks view, and loads a skill, in the %s era', async era => {
    const server = createServer({ name: 'tasks-and-skills', version: '1.0.0' })
    registerTaskFixtures(server)
    await registerSkillFixtures(server)
    const [clientEnd, serverEnd] = createMemoryPair({ serialize: true })
    await server.listen(serverEnd)
    const ui = await serveInspectorUi({ transport: 'memory', connect: options => connect(clientEnd, { name: 'rxmcp-inspector', version: '0.1.0' }, { ...options, era }) })
    try {
      await visit(ui.url)
      await until(`t.$('#connection').dataset.era === '${era}'`)
      await tab('Tools')
      await until(`t.$('[data-tool="slow_compute"]')`)
      await run(`t.click('[data-tool="slow_compute"]')`)
      await until(`t.$('#tool[data-tool="slow_compute"] #as-task')`)
      await run(`t.click('#as-task'); t.set('[name="seconds"]', '0.3')`)
      await run(`t.click('#call')`)
      await until(`t.$('#call-task')`)
      await until(`t.text('#result').includes('Computed after 0.3 seconds')`)
      await tab('Tasks')
      await until(`t.$('#tasks tr[data-status="completed"]')`)
      if (era === 'modern') await shoot('tasks')
      await tab('Skills')
      await until(`t.$('[data-skill]')`)
      await run(`t.click('[data-skill]')`)
      await until(`t.text('#skill').includes('SKILL.md')`)
      expect(page!.log.filter(line => line.startsWith('exception'))).toEqual([])
    } finally {
      await ui.close()
      await server.close()
    }
  }, 3 * WAIT_MS)
})
