/**
 * The rules of `_meta` key names (MCP 2025-11-25 and 2026-07-28, basic, `_meta`): an optional
 * prefix, then a name.
 *
 * - prefix: labels separated by dots, followed by a slash; each label starts with a letter and
 *   ends with a letter or digit, with letters, digits or hyphens between (`io.modelcontextprotocol/`);
 * - name: empty, or beginning and ending with a letter or digit, with letters, digits, hyphens,
 *   underscores or dots between (`progressToken`, `related-task`).
 *
 * A prefix whose second label is `modelcontextprotocol` or `mcp` is reserved for MCP. The trace
 * context keys (`traceparent`, `tracestate`, `baggage`) are names without a prefix.
 */

/** A prefix label: a letter, then letters, digits or hyphens, ending with a letter or digit. */
const LABEL = /^[A-Za-z](?:[A-Za-z0-9-]*[A-Za-z0-9])?$/
/** A name: empty, or an alphanumeric, then letters, digits, `-`, `_` or `.`, ending with an alphanumeric. */
const NAME = /^(?:[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?)?$/

/**
 * What is wrong with `key` as a `_meta` key name, as short phrases; empty when it follows the rules
 * (see the file's comment). rxmcp writes only keys that do; check keys of your own with it.
 *
 * @example
 * metaKeyIssues('com.example/trace-id')  // []
 * metaKeyIssues('example.com/-x')        // ['has a name that does not begin and end with a letter or digit, ...']
 */
export function metaKeyIssues(key: string): string[] {
  const issues: string[] = []
  const slash = key.indexOf('/')
  if (slash !== key.lastIndexOf('/')) return ['has more than one slash (a prefix ends at the only one)']
  if (slash >= 0) {
    const prefix = key.slice(0, slash)
    const bad = prefix.split('.').filter(label => !LABEL.test(label))
    if (prefix === '' || bad.length > 0) {
      issues.push(`has a prefix ${JSON.stringify(`${prefix}/`)} whose labels do not each start with a letter and end with a letter or digit (letters, digits and hyphens between)`)
    }
  }
  if (!NAME.test(key.slice(slash + 1))) {
    issues.push('has a name that does not begin and end with a letter or digit (letters, digits, hyphens, underscores and dots between)')
  }
  return issues
}

/**
 * Whether `key` has a prefix MCP reserves: its second label is `modelcontextprotocol` or `mcp`
 * (`io.modelcontextprotocol/`, `dev.mcp/`; not `com.example.mcp/`). Only MCP and its official
 * extensions define keys there.
 */
export function isReservedMetaKey(key: string): boolean {
  const slash = key.indexOf('/')
  if (slash < 0) return false
  const second = key.slice(0, slash).split('.')[1]
  return second === 'modelcontextprotocol' || second === 'mcp'
}
