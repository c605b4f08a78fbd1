/*
 * `multipleOf` as JSON Schema means it, on the decimal numbers a JSON text writes: 1.13 is a
 * multiple of 0.01, and 1e21 of 1. A leaf: ajv's own check divides in floating point (so it refuses
 * both), and the compiled validator (./json-schema.ts) replaces it with this one, which the
 * interpreter's check agrees with.
 */

/**
 * True when `value` is an integer multiple of `divisor` (> 0), both read as the shortest decimal
 * that round-trips to them (what JSON.stringify writes and JSON.parse read), not as binary
 * fractions. Exact at any magnitude: the comparison runs on BigInt digits.
 * @example
 * isMultipleOf(1.13, 0.01) // true (1.13 / 0.01 is 112.99999999999999 in floating point)
 */
export function isMultipleOf(value: number, divisor: number): boolean {
  if (!Number.isFinite(value) || !Number.isFinite(divisor) || divisor <= 0) return false
  // The common case, exact in floating point already.
  if (Number.isSafeInteger(value) && Number.isSafeInteger(divisor)) return value % divisor === 0
  const [valueDigits, valueExponent] = decimalOf(value)
  const [divisorDigits, divisorExponent] = decimalOf(divisor)
  // Scale both to the smaller power of ten, so each is an integer count of it.
  const exponent = Math.min(valueExponent, divisorExponent)
  const scaledValue = valueDigits * 10n ** BigInt(valueExponent - exponent)
  const scaledDivisor = divisorDigits * 10n ** BigInt(divisorExponent - exponent)
  return scaledValue % scaledDivisor === 0n
}

/** |n| as integer digits and a power of ten: 1.5e-7 is [15n, -8], 1e+21 is [1n, 21]. */
function decimalOf(n: number): [bigint, number] {
  const [mantissa, exponent = '0'] = Math.abs(n).toString().split('e')
  const point = mantissa!.indexOf('.')
  const fractionDigits = point < 0 ? 0 : mantissa!.length - point - 1
  return [BigInt(mantissa!.replace('.', '')), Number(exponent) - fractionDigits]
}
