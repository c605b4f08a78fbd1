/*
 * The wording of JSON Schema verdicts, shared by both validators (./json-schema.ts on ajv,
 * ./json-schema-interpreted.ts on @cfworker/json-schema) so that a tool answers a bad argument with
 * the same line whichever of them checked it. A leaf.
 */
import type { ValidationIssue, ValidationResult } from './schema-rules.ts'

/** The valid verdict, shared so that a passing call allocates nothing. */
export const VALID: ValidationResult = Object.freeze({ valid: true })

/** The verdict on a value nested too deeply to walk (the validator ran out of stack). */
export const TOO_DEEP: ValidationResult = Object.freeze({
  valid: false,
  message: 'value is nested too deeply to validate',
  errors: Object.freeze([Object.freeze({ path: '', message: 'value is nested too deeply to validate' })]),
})

/** The invalid verdict for `issues`: one line joining them, each prefixed by its path unless at the root. */
export function invalidResult(issues: readonly ValidationIssue[]): ValidationResult {
  const message = issues.map(issue => (issue.path === '' ? issue.message : `${issue.path}: ${issue.message}`)).join('; ')
  return { valid: false, message: oneLine(message || 'value is invalid'), errors: issues }
}

/** Why a value is not one of `allowed`: the first few values, since a long enum would swamp the line. */
export function enumMessage(allowed: readonly unknown[]): string {
  const shown = allowed.slice(0, 10).map(value => JSON.stringify(value)).join(', ')
  return `must be one of ${shown}${allowed.length > 10 ? ', …' : ''}`
}

/** Why a value is not `allowed` (the `const` keyword). */
export function constMessage(allowed: unknown): string {
  return `must be ${JSON.stringify(allowed)}`
}

/** Why an object fails `additionalProperties: false` (or `unevaluatedProperties: false`): the property it may not have. */
export function extraPropertyMessage(keyword: 'additionalProperties' | 'unevaluatedProperties', name: string): string {
  return `must NOT have ${keyword === 'additionalProperties' ? 'additional' : 'unevaluated'} property ${JSON.stringify(name)}`
}

/** Escapes line breaks and other controls (from property names, say) so a message stays one line. */
export function oneLine(text: string): string {
  return text.replace(/[\u0000-\u001f\u007f\u2028\u2029]/g, char => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`)
}
