/**
 * RFC 6570 URI Templates, the syntax: a template parsed into literals and expressions, and the
 * operators' rules (appendix A) that expansion and matching both follow.
 */

/** Longest template accepted, and most expressions in one: bounds the work of parsing. */
export const MAX_TEMPLATE_LENGTH = 1_000_000
const MAX_EXPRESSIONS = 10_000

/** One variable of an expression: its name, and its `*` (explode) or `:n` (prefix) modifier. */
export interface VarSpec { name: string; explode: boolean; prefix?: number }
/** One `{expression}`: its operator and its variables. */
export interface Expression { operator: Operator; vars: VarSpec[] }
/** A piece of a parsed template: literal text, or an expression. */
export type Part = string | Expression

/** The operator that opens an expression ('' for none). */
export type Operator = '' | '+' | '#' | '.' | '/' | ';' | '?' | '&'

/** How each operator expands (RFC 6570 appendix A). */
export const OPERATORS: Record<Operator, { first: string; separator: string; named: boolean; ifEmpty: string; allowReserved: boolean }> = {
  '': { first: '', separator: ',', named: false, ifEmpty: '', allowReserved: false },
  '+': { first: '', separator: ',', named: false, ifEmpty: '', allowReserved: true },
  '#': { first: '#', separator: ',', named: false, ifEmpty: '', allowReserved: true },
  '.': { first: '.', separator: '.', named: false, ifEmpty: '', allowReserved: false },
  '/': { first: '/', separator: '/', named: false, ifEmpty: '', allowReserved: false },
  ';': { first: ';', separator: ';', named: true, ifEmpty: '', allowReserved: false },
  '?': { first: '?', separator: '&', named: true, ifEmpty: '=', allowReserved: false },
  '&': { first: '&', separator: '&', named: true, ifEmpty: '=', allowReserved: false },
}

/**
 * The parts of a template, in order: literal text and `{expression}`s.
 * @throws TypeError for an unmatched brace, an empty expression, a bad variable name, or too many expressions.
 */
export function parseTemplate(template: string): Part[] {
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
