/** A decimal text as an exact rational (numerator, power of ten), by BigInt: the tests' oracle, built another way than the code. */
export function exactDecimal(text: string): { n: bigint; scale: number } {
  const [mantissa, exponent = '0'] = text.trim().toLowerCase().split('e')
  const negative = mantissa!.startsWith('-')
  const [whole = '', fraction = ''] = mantissa!.replace(/^[+-]/, '').split('.')
  let n = BigInt((whole + fraction).replace(/^0+(?=\d)/, '') || '0')
  let scale = fraction.length - Number(exponent)
  if (scale < 0) {
    n *= 10n ** BigInt(-scale)
    scale = 0
  }
  return { n: negative ? -n : n, scale }
}

/** The order of two decimal texts by value: -1, 0 or 1. */
export function oracleCompare(a: string, b: string): number {
  const x = exactDecimal(a)
  const y = exactDecimal(b)
  const scale = Math.max(x.scale, y.scale)
  const l = x.n * 10n ** BigInt(scale - x.scale)
  const r = y.n * 10n ** BigInt(scale - y.scale)
  return l < r ? -1 : l > r ? 1 : 0
}
