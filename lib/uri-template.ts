/**
 * RFC 6570 URI Templates: expansion (levels 1 to 4) and the reverse, matching a URI against a
 * template to read its variables back, which is how `resources/read` finds the template a URI
 * belongs to. No dependencies, no Node APIs.
 */

import { MAX_TEMPLATE_LENGTH, parseTemplate, type Part } from './uri-template-parse.ts'
import { expandExpression, type TemplateValues } from './uri-template-expand.ts'
import { compileMatcher, flatten, readCapture, run, type Capture, type FlatProgram } from './uri-template-match.ts'

export type { TemplateValues }
export { countMatchSteps } from './uri-template-match.ts'

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
   *
   * An encoded slash (`%2F`) never matches a simple `{var}`, nor `{.var}`, `{/var}` or `{;var}`:
   * their values cannot hold a `/`, and decoding one in would let `..%2F..%2Fsecret` reach a
   * handler as a path. Use `{+var}` for values that may hold slashes (expansion is not symmetric
   * here: `{id}` expands `a/b` to `a%2Fb`, which it then refuses to match). Matching takes time
   * linear in the URI's length, and a URI longer than {@link MAX_MATCH_LENGTH} matches nothing.
   */
  match(uri: string): Record<string, string | string[]> | undefined
}

/**
 * Longest URI matched against a template (64 Ki UTF-16 units); a longer one matches no template.
 * Matching is linear, this only keeps one request's cost small on a server with many templates.
 */
export const MAX_MATCH_LENGTH = 65_536

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
  readonly #program: FlatProgram
  readonly #captures: Capture[]

  constructor(template: string) {
    if (typeof template !== 'string') throw new TypeError('A URI template must be a string')
    if (template.length > MAX_TEMPLATE_LENGTH) throw new TypeError('URI template too long')
    this.template = template
    this.#parts = parseTemplate(template)
    this.variableNames = this.#parts.flatMap(part => typeof part === 'string' ? [] : part.vars.map(v => v.name))
    const program = compileMatcher(this.#parts)
    this.#program = flatten(program)
    this.#captures = program.captures
  }

  expand(values: TemplateValues): string {
    let out = ''
    for (const part of this.#parts) out += typeof part === 'string' ? part : expandExpression(part, values)
    return out
  }

  match(uri: string): Record<string, string | string[]> | undefined {
    if (typeof uri !== 'string' || uri.length > MAX_MATCH_LENGTH) return undefined
    const slots = run(this.#program, uri)
    if (slots === undefined) return undefined
    const values: Record<string, string | string[]> = Object.create(null)
    const captures = this.#captures
    for (let group = 0; group < captures.length; group++) {
      const start = slots[group * 2]!
      const end = slots[group * 2 + 1]!
      if (start < 0 || end < 0) continue
      const { expression, index } = captures[group]!
      if (!readCapture(expression, index, uri.slice(start, end), values)) return undefined
    }
    return { ...values }
  }
}
