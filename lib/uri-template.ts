/**
 * RFC 6570 URI Templates: expansion (levels 1 to 4) and the reverse, matching a URI against a
 * template to read its variables back, which is how `resources/read` finds the template a URI
 * belongs to. No dependencies, no Node APIs.
 */

/** Values a template expands: strings, numbers, lists, or undefined (left out). */
export type TemplateValues = Record<string, string | number | readonly string[] | undefined>

/** A parsed template. */
export interface UriTemplate {
  readonly template: string
  /** Every variable name, in order of appearance. */
  readonly variableNames: readonly string[]
  /** The URI for `values`, as RFC 6570 section 3 expands it. */
  expand(values: TemplateValues): string
  /**
   * The variables of `uri`, percent-decoded, or undefined when it does not fit the template. Query
   * expressions (`{?a,b}`, `{&c}`) match their parameters in any order, missing ones are left out,
   * and parameters the template does not name are ignored. Exploded variables give lists.
   */
  match(uri: string): Record<string, string | string[]> | undefined
}

/** Longest template accepted, and most expressions in one: bounds the work of parsing. */
const MAX_TEMPLATE_LENGTH = 1_000_000
const MAX_EXPRESSIONS = 10_000

interface VarSpec { name: string; explode: boolean; prefix?: number }
interface Expression { operator: Operator; vars: VarSpec[] }
type Part = string | Expression

type Operator = '' | '+' | '#' | '.' | '/' | ';' | '?' | '&'

/** How each operator expands (RFC 6570 appendix A). */
const OPERATORS: Record<Operator, { first: string; separator: string; named: boolean; ifEmpty: string; allowReserved: boolean }> = {
  '': { first: '', separator: ',', named: false, ifEmpty: '', allowReserved: false },
  '+': { first: '', separator: ',', named: false, ifEmpty: '', allowReserved: true },
  '#': { first: '#', separator: ',', named: false, ifEmpty: '', allowReserved: true },
  '.': { first: '.', separator: '.', named: false, ifEmpty: '', allowReserved: false },
  '/': { first: '/', separator: '/', named: false, ifEmpty: '', allowReserved: false },
  ';': { first: ';', separator: ';', named: true, ifEmpty: '', allowReserved: false },
  '?': { first: '?', separator: '&', named: true, ifEmpty: '=', allowReserved: false },
  '&': { first: '&', separator: '&', named: true, ifEmpty: '=', allowReserved: false },
}

/** True when `text` contains at least one `{expression}`. */
export function isUriTemplate(text: string): boolean {
  return /\{[^{}]+\}/.test(text)
}

/**
 * Parses a template once.
 * @throws TypeError for a malformed template (an unclosed brace, a bad variable name) or one over the limits.
 * @example
 * uriTemplate('users://{id}/posts{?limit}').match('users://42/posts?limit=5') // { id: '42', limit: '5' }
 */
export function uriTemplate(template: string): UriTemplate {
  return new ParsedTemplate(template)
}

class ParsedTemplate implements UriTemplate {
  readonly template: string
  readonly variableNames: readonly string[]
  readonly #parts: Part[]
  readonly #pattern: RegExp
  /** For each capture group of the pattern: how to read it back. */
  readonly #captures: { expression: Expression; index: number }[]

  constructor(template: string) {
    if (typeof template !== 'string') throw new TypeError('A URI template must be a string')
    if (template.length > MAX_TEMPLATE_LENGTH) throw new TypeError('URI template too long')
    this.template = template
    this.#parts = parse(template)
    this.variableNames = this.#parts.flatMap(part => typeof part === 'string' ? [] : part.vars.map(v => v.name))
    const { pattern, captures } = compileMatcher(this.#parts)
    this.#pattern = pattern
    this.#captures = captures
  }

  expand(values: TemplateValues): string {
    let out = ''
    for (const part of this.#parts) out += typeof part === 'string' ? part : expandExpression(part, values)
    return out
  }

  match(uri: string): Record<string, string | string[]> | undefined {
    const found = this.#pattern.exec(uri)
    if (found === null) return undefined
    const values: Record<string, string | string[]> = Object.create(null)
    for (let group = 0; group < this.#captures.length; group++) {
      const raw = found[group + 1]
      if (raw === undefined) continue
      const { expression } = this.#captures[group]!
      if (!readCapture(expression, this.#captures[group]!.index, raw, values)) return undefined
    }
    return { ...values }
  }
}

// ---- parsing ----

function parse(template: string): Part[] {
  const parts: Part[] = []
  let literal = ''
  let expressions = 0
  for (let i = 0; i < template.length; i++) {
    const char = template[i]!
    if (char === '}') throw new TypeError(`Malformed URI template: unmatched "}" at ${i}`)
    if (char !== '{') { literal += char; continue }
    const close = template.indexOf('}', i + 1)
    if (close < 0) throw new TypeError(`Malformed URI template: unclosed "{" at ${i}`)
    if (++expressions > MAX_EXPRESSIONS) throw new TypeError('URI template has too many expressions')
    if (literal) { parts.push(literal); literal = '' }
    parts.push(parseExpression(template.slice(i + 1, close), i))
    i = close
  }
  if (literal) parts.push(literal)
  return parts
}

function parseExpression(body: string, at: number): Expression {
  let operator: Operator = ''
  if (body.length > 0 && '+#./;?&'.includes(body[0]!)) {
    operator = body[0] as Operator
    body = body.slice(1)
  }
  if (body.length === 0) throw new TypeError(`Malformed URI template: empty expression at ${at}`)
  const vars = body.split(',').map(spec => {
    const match = /^((?:[A-Za-z0-9_]|%[0-9A-Fa-f]{2})(?:\.?(?:[A-Za-z0-9_]|%[0-9A-Fa-f]{2}))*)(\*|:([1-9][0-9]{0,3}))?$/.exec(spec)
    if (match === null) throw new TypeError(`Malformed URI template: bad variable ${JSON.stringify(spec)} at ${at}`)
    const varSpec: VarSpec = { name: match[1]!, explode: match[2] === '*' }
    if (match[3] !== undefined) varSpec.prefix = Number(match[3])
    return varSpec
  })
  return { operator, vars }
}

// ---- expansion ----

function expandExpression(expression: Expression, values: TemplateValues): string {
  const spec = OPERATORS[expression.operator]
  const pieces: string[] = []
  for (const variable of expression.vars) {
    const value = Object.hasOwn(values, variable.name) ? values[variable.name] : undefined
    if (value === undefined || value === null) continue
    const encode = (text: string) => encodeValue(text, spec.allowReserved)
    if (Array.isArray(value)) {
      if (value.length === 0) continue
      if (variable.explode) {
        pieces.push(value.map(item => spec.named ? `${variable.name}=${encode(String(item))}` : encode(String(item))).join(spec.separator))
      } else {
        const joined = value.map(item => encode(String(item))).join(',')
        pieces.push(spec.named ? `${variable.name}=${joined}` : joined)
      }
      continue
    }
    let text = String(value)
    if (variable.prefix !== undefined) text = [...text].slice(0, variable.prefix).join('')
    const encoded = encode(text)
    if (spec.named) pieces.push(encoded === '' ? `${variable.name}${spec.ifEmpty}` : `${variable.name}=${encoded}`)
    else pieces.push(encoded)
  }
  return pieces.length === 0 ? '' : spec.first + pieces.join(spec.separator)
}

const UNRESERVED = /[A-Za-z0-9\-._~]/
const RESERVED = /[:/?#[\]@!$&'()*+,;=]/

function encodeValue(text: string, allowReserved: boolean): string {
  let out = ''
  for (let i = 0; i < text.length; i++) {
    const char = text[i]!
    if (UNRESERVED.test(char)) { out += char; continue }
    if (allowReserved) {
      if (RESERVED.test(char)) { out += char; continue }
      // Keep an existing percent-encoded triplet as it is.
      if (char === '%' && /^[0-9A-Fa-f]{2}$/.test(text.slice(i + 1, i + 3))) { out += text.slice(i, i + 3); i += 2; continue }
    }
    const code = text.codePointAt(i)!
    const whole = String.fromCodePoint(code)
    if (whole.length === 2) i++
    out += encodeURIComponent(whole).replace(/[!'()*]/g, c => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)
  }
  return out
}

// ---- matching ----

function compileMatcher(parts: Part[]): { pattern: RegExp; captures: { expression: Expression; index: number }[] } {
  let source = '^'
  const captures: { expression: Expression; index: number }[] = []
  for (let p = 0; p < parts.length; p++) {
    const part = parts[p]!
    if (typeof part === 'string') { source += escapeRegExp(part); continue }
    const { operator, vars } = part
    if (operator === '?' || operator === '&') {
      // Query parameters in any order: capture the whole query, read names out of it afterwards.
      source += operator === '?' ? '(?:\\?([^#]*))?' : '(?:&([^#]*))?'
      captures.push({ expression: part, index: -1 })
      continue
    }
    if (operator === '' || operator === '+' || operator === '#') {
      // A simple value stops at '.' when a {.ext} follows it, so `{name}{.ext}` splits `logo.png`.
      const next = parts[p + 1]
      const isDotNext = next !== undefined && typeof next !== 'string' && next.operator === '.'
      const piece = operator === '' ? (isDotNext ? '[^/?#&,.]*' : '[^/?#&,]*') : operator === '+' ? '[^?#]*' : '.*'
      const prefix = operator === '#' ? '(?:#' : ''
      const inner = vars.map(() => `(${piece})`).join(',')
      source += operator === '#' ? `${prefix}${inner})?` : inner
      vars.forEach((_, index) => captures.push({ expression: part, index }))
      continue
    }
    const first = escapeRegExp(OPERATORS[operator].first)
    for (let index = 0; index < vars.length; index++) {
      const variable = vars[index]!
      const stop = operator === '.' ? '[^/?#.]' : operator === '/' ? '[^/?#]' : '[^;/?#]'
      if (variable.explode) source += `((?:${first}${stop}*)*)`
      else if (operator === ';') source += `(?:;(${escapeRegExp(variable.name)}(?:=${stop}*)?))?`
      else source += `(?:${first}(${stop}*))?`
      captures.push({ expression: part, index })
    }
  }
  return { pattern: new RegExp(source + '$'), captures }
}

function readCapture(expression: Expression, index: number, raw: string, values: Record<string, string | string[]>): boolean {
  const { operator, vars } = expression
  if (index === -1) {
    // A query: name=value pairs joined by &.
    const wanted = new Map(vars.map(v => [v.name, v]))
    for (const pair of raw.split('&')) {
      if (pair === '') continue
      const equals = pair.indexOf('=')
      const name = safeDecode(equals < 0 ? pair : pair.slice(0, equals))
      const value = safeDecode(equals < 0 ? '' : pair.slice(equals + 1))
      if (name === undefined || value === undefined) return false
      const variable = wanted.get(name)
      if (variable === undefined) continue
      if (variable.explode) {
        const list = values[name]
        values[name] = Array.isArray(list) ? [...list, value] : [value]
      } else {
        values[name] = value
      }
    }
    return true
  }
  const variable = vars[index]!
  if (operator === ';') {
    const equals = raw.indexOf('=')
    const value = safeDecode(equals < 0 ? '' : raw.slice(equals + 1))
    if (value === undefined) return false
    values[variable.name] = value
    return true
  }
  if (variable.explode && (operator === '/' || operator === '.')) {
    const items = raw.split(OPERATORS[operator].first).slice(1).map(safeDecode)
    if (items.some(item => item === undefined)) return false
    values[variable.name] = items as string[]
    return true
  }
  const value = safeDecode(raw)
  if (value === undefined) return false
  values[variable.name] = value
  return true
}

function safeDecode(text: string): string | undefined {
  try { return decodeURIComponent(text) } catch { return undefined }
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')
}
