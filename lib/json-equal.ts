/*
 * Equality of JSON values, for `const`, `enum` and `uniqueItems`, shared by both validators. A
 * leaf. ajv's own (fast-deep-equal) calls a value's `toString` and `valueOf` members, so a JSON
 * object with a `"toString"` member made it throw instead of comparing.
 */

/** True when two JSON values are equal: same type, same items in order, same members in any order. */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false
  if (Array.isArray(a)) return Array.isArray(b) && a.length === b.length && a.every((item, index) => jsonEqual(item, b[index]))
  if (Array.isArray(b)) return false
  const keys = Object.keys(a)
  if (keys.length !== Object.keys(b).length) return false
  return keys.every(key => Object.hasOwn(b, key) && jsonEqual((a as Record<string, unknown>)[key], (b as Record<string, unknown>)[key]))
}

/**
 * The indexes of the first pair of equal items in `data`, in the order ajv names them, or undefined
 * when all differ. Scanning from the end: when `items` (the schema's) says the items are scalars,
 * by value, skipping items of other types (the later index first); else comparing each item with
 * those before it (the earlier index first).
 */
export function duplicateItems(items: unknown, data: readonly unknown[]): [number, number] | undefined {
  const types = typeof items === 'object' && items !== null && !Array.isArray(items)
    ? [(items as { type?: unknown }).type].flat().filter(type => typeof type === 'string') : []
  if (types.length > 0 && !types.some(type => type === 'object' || type === 'array')) {
    // The later index of each scalar seen so far.
    const later = new Map<unknown, number>()
    for (let index = data.length - 1; index >= 0; index--) {
      const item = data[index]
      if (!types.some(type => isOfType(item, type))) continue
      const other = later.get(item)
      if (other !== undefined) return [other, index]
      later.set(item, index)
    }
    return undefined
  }
  for (let index = data.length - 1; index > 0; index--) {
    for (let other = index - 1; other >= 0; other--) if (jsonEqual(data[index], data[other])) return [other, index]
  }
  return undefined
}

function isOfType(value: unknown, type: string): boolean {
  switch (type) {
    case 'integer': return Number.isInteger(value)
    case 'null': return value === null
    default: return typeof value === type
  }
}
