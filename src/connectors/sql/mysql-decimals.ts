import { sql, type RawBuilder } from 'kysely'

/**
 * A MySQL/MariaDB decimal numeral cast to a decimal just wide enough for its digits. One fixed cast cannot serve:
 * `decimal(65, 30)` keeps 35 digits before the point, and clamped a 40-digit id a decimal(40,0) column holds to
 * 99…9, so the row the walk showed read as missing. A numeral no decimal column can hold (over 65 digits, over 30
 * after the point) is null. Exponent forms (a walk never shows one for a decimal column) keep the widest fraction.
 */
export function mysqlDecimalCast(id: string): RawBuilder<unknown> | null {
  const plain = /^-?(\d*)(?:\.(\d*))?$/.exec(id)
  if (plain === null) return sql`cast(${id} as decimal(65, 30))`
  const whole = (plain[1] ?? '').replace(/^0+/, '').length
  const scale = (plain[2] ?? '').length
  const precision = Math.max(1, whole + scale)
  if (precision > 65 || scale > 30) return null
  return sql`cast(${id} as decimal(${sql.raw(String(precision))}, ${sql.raw(String(scale))}))`
}

/**
 * A filter's number as a MySQL/MariaDB parameter. JavaScript spells one at or past 1e21, or below 1e-6, with an
 * exponent, and the server reads such a literal as a double: a DECIMAL column compared with it is compared as
 * doubles, and 10^21 + 1 equalled 1e21. Such a number goes as the decimal its shortest spelling names, cast just
 * wide enough (a DOUBLE or FLOAT column still compares with it as doubles); one no decimal can hold (past 65 digits,
 * past 30 after the point) is compared as the double it is, as no DECIMAL column holds it either.
 */
export function mysqlNumberParam(value: number): RawBuilder<unknown> {
  const spelled = String(value)
  const exponent = /^(-?)(\d+)(?:\.(\d+))?e([-+]\d+)$/.exec(spelled)
  if (exponent === null) return sql`${value}`
  const [, sign = '', whole = '', fraction = '', power = '0'] = exponent
  const digits = whole + fraction
  const point = whole.length + Number(power)
  const plain =
    point <= 0 ? `${sign}0.${'0'.repeat(-point)}${digits}` : point >= digits.length ? `${sign}${digits}${'0'.repeat(point - digits.length)}` : `${sign}${digits.slice(0, point)}.${digits.slice(point)}`
  return mysqlDecimalCast(plain) ?? sql`${value}`
}
