/*
 * The string formats rxmcp checks (`email`, `uri`, `date`, `date-time`, `uuid`), written once for
 * both JSON Schema validators: ajv (./json-schema.ts) takes them as format checks, the interpreter
 * (./json-schema-interpreted.ts) as `pattern`s, so each regular expression here is written to mean
 * the same with the `u` flag alone (no `i`: with `iu`, `\w` and `[a-z]` also match `ſ` and the
 * Kelvin sign). A leaf: neither validator imports the other.
 */

/**
 * What a form needs of an address, not the full RFC 5321 grammar: a local part of dot-separated
 * runs without spaces or @ (no leading, trailing or doubled dot), one @, and a domain of at least
 * two dot-separated hostname labels (letters, digits, inner hyphens). Quoted local parts and
 * address literals (`[127.0.0.1]`) are refused.
 */
export const EMAIL_PATTERN = '^[^\\s@.]+(?:\\.[^\\s@.]+)*@[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)+$'

/**
 * RFC 3986 absolute URI: a scheme, a colon, then only characters a URI may hold, with % only as
 * part of a %XX escape. Spaces, non-ASCII (IRIs) and relative references are rejected.
 */
export const URI_PATTERN = "^[A-Za-z][A-Za-z0-9+.\\-]*:(?:[A-Za-z0-9_\\-.~:/?#\\[\\]@!$&'()*+,;=]|%[0-9A-Fa-f]{2})*$"

/** RFC 9562 hex-and-dash form, any version or variant (the nil and max UUIDs included). */
export const UUID_PATTERN = '^[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}$'

/**
 * The shape of an RFC 3339 date-time: `T` (or `t`), seconds required, an offset (`Z`, `z` or
 * ±hh:mm) required. The calendar and clock ranges are {@link isDateTime}'s to check.
 */
export const DATE_TIME_SHAPE = '^\\d{4}-\\d{2}-\\d{2}[Tt]\\d{2}:\\d{2}:\\d{2}(?:\\.\\d+)?(?:[Zz]|[+-]\\d{2}:\\d{2})$'

/**
 * RFC 3339 full-date: a real calendar day, February 29th in leap years only (every fourth year,
 * but of the centuries only those divisible by 400). The same rule as {@link isDate}.
 */
export const DATE_PATTERN = '^(?:\\d{4}-(?:(?:0[13578]|1[02])-(?:0[1-9]|[12]\\d|3[01])|(?:0[469]|11)-(?:0[1-9]|[12]\\d|30)|02-(?:0[1-9]|1\\d|2[0-8]))'
  + '|(?:\\d{2}(?:0[48]|[2468][048]|[13579][26])|(?:[02468][048]|[13579][26])00)-02-29)$'

/** RFC 3339 full-date: a real calendar day (February 29th in leap years only). */
export function isDate(text: string): boolean {
  const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(text)
  if (match === null) return false
  const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])]
  return month >= 1 && month <= 12 && day >= 1 && day <= daysInMonth(year, month)
}

/**
 * RFC 3339 date-time: {@link DATE_TIME_SHAPE}, a real day, hours 00-23, minutes 00-59, seconds
 * 00-60 with 60 only for a leap second (23:59:60 in UTC), offsets up to ±23:59.
 */
export function isDateTime(text: string): boolean {
  const match = /^(\d{4}-\d{2}-\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.\d+)?(?:[Zz]|([+-])(\d{2}):(\d{2}))$/.exec(text)
  if (match === null || !isDate(match[1])) return false
  const [hour, minute, second] = [Number(match[2]), Number(match[3]), Number(match[4])]
  const sign = match[5] === '-' ? -1 : 1
  const [offsetHour, offsetMinute] = [Number(match[6] ?? 0), Number(match[7] ?? 0)]
  if (hour > 23 || minute > 59 || second > 60 || offsetHour > 23 || offsetMinute > 59) return false
  // RFC 3339 allows second 60 for a leap second, which only ever happens at 23:59 UTC.
  if (second === 60) {
    const utcMinutes = (((hour * 60 + minute - sign * (offsetHour * 60 + offsetMinute)) % 1440) + 1440) % 1440
    return utcMinutes === 23 * 60 + 59
  }
  return true
}

/** The formats rxmcp checks; any other `format` is an annotation and never fails a value. */
export const CHECKED_FORMATS: ReadonlySet<string> = new Set(['email', 'uri', 'date', 'date-time', 'uuid'])

function daysInMonth(year: number, month: number): number {
  if (month === 2) return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28
  return month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31
}
