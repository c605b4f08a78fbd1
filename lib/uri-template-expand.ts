/** RFC 6570 URI Templates, expansion (levels 1 to 4): values in, URI out. */

import { OPERATORS, type Expression } from './uri-template-parse.ts'

/** Values a template expands: strings, numbers, lists, or undefined (left out). */
export type TemplateValues = Record<string, string | number | readonly string[] | undefined>

/** One expression expanded with `values`, as RFC 6570 section 3.2 describes; '' when every variable is undefined or empty. */
export function expandExpression(expression: Expression, values: TemplateValues): string {
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
