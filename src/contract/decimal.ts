const DECIMAL_TEXT = /^\s*([+-]?)(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d+))?\s*$/

/**
 * A decimal's value as `<sign><digits>e<point>`, whatever its spelling: "1.10", "01.1" and "1.1e0" are one
 * value, `1e1` (0.1 × 10^1). The digits carry no leading or trailing zeros and the value is 0.<digits> × 10^point,
 * so two forms are equal exactly when their values are. Zero is "0" (and "-0" is zero). Null for text that is
 * not a decimal.
 *
 * @example decimalOf('12345678901234567.890') // '1234567890123456789e17'
 */
export function decimalOf(text: string): string | null {
  const match = DECIMAL_TEXT.exec(text)
  if (match === null || (match[2] === '' && (match[3] ?? '') === '')) return null
  const whole = match[2]!
  let digits = whole + (match[3] ?? '')
  let point = whole.length + Number(match[4] ?? 0)
  const leading = /^0*/.exec(digits)![0].length
  digits = digits.slice(leading).replace(/0+$/, '')
  point -= leading
  return digits === '' ? '0' : `${match[1] === '-' ? '-' : ''}${digits}e${point}`
}

/** Whether decimal text names a whole number ("12345678901234567890", "-3.00"): `decimalOf`'s digits all before the point. */
export function wholeDecimal(text: string): boolean {
  const form = decimalOf(text)
  if (form === null) return false
  if (form === '0') return true
  const [digits, point] = form.replace(/^-/, '').split('e') as [string, string]
  return digits.length <= Number(point)
}

/**
 * Orders two decimals by value, exactly, whatever their digits: negative when `a` is less, zero when equal,
 * positive when greater; null when either is not a decimal. A record keeps a number a double would round as its
 * exact digits (a 64-bit id, a numeric(40, 2) balance); a rule comparing it with a number compares these, so
 * "12345678901234567.89" is greater than 1e16, not a string that no number equals.
 *
 * @example compareDecimals('12345678901234567.89', String(1e16)) // 1
 */
export function compareDecimals(a: string, b: string): number | null {
  const x = decimalOf(a)
  const y = decimalOf(b)
  if (x === null || y === null) return null
  const sx = signOf(x)
  const sy = signOf(y)
  if (sx !== sy) return Math.sign(sx - sy)
  if (sx === 0) return 0
  // same sign: compare magnitudes, then flip for negatives
  return sx * compareMagnitudes(sx < 0 ? x.slice(1) : x, sy < 0 ? y.slice(1) : y)
}

function signOf(form: string): number {
  return form === '0' ? 0 : form.startsWith('-') ? -1 : 1
}

/** Two non-zero unsigned forms: the larger point is the larger value; at the same point, the digits decide. */
function compareMagnitudes(x: string, y: string): number {
  const e = x.lastIndexOf('e')
  const f = y.lastIndexOf('e')
  const px = Number(x.slice(e + 1))
  const py = Number(y.slice(f + 1))
  if (px !== py) return Math.sign(px - py)
  // both digit strings start with a non-zero digit and lack trailing zeros, so text order is value order
  const dx = x.slice(0, e)
  const dy = y.slice(0, f)
  return dx === dy ? 0 : dx < dy ? -1 : 1
}
