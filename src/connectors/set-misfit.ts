import type { FieldTypeMisfit } from './connector.js'

/**
 * The first field a write sets to a value (not null) whose column holds another type than the field is declared
 * (`FieldTypeMisfit`, the judgement that refuses a filter on it), with the value's type; null when every set field
 * fits, or where no misfits could be read. Such a value never lands as approved: PostgreSQL refuses a boolean
 * into an integer column ("invalid input syntax for type integer"), SQLite and MariaDB keep a number or a boolean
 * in a text column as text, which a record then shows as a string. Null is every column's "none", and is written.
 *
 * @example setMisfit({ flag: true }, misfits) // { misfit: { field: 'flag', column: 'integer', … }, valueType: 'a boolean' }
 */
export function setMisfit(set: Readonly<Record<string, unknown>>, misfits: readonly FieldTypeMisfit[] | null): { readonly misfit: FieldTypeMisfit; readonly valueType: string } | null {
  if (misfits === null || misfits.length === 0) return null
  for (const [field, value] of Object.entries(set)) {
    if (value === null || value === undefined) continue
    const misfit = misfits.find((m) => m.field === field)
    if (misfit) return { misfit, valueType: Array.isArray(value) ? 'a list' : `a ${typeof value}` }
  }
  return null
}

/** Why a value set into a misfit column cannot be written as approved, in the words of every refusal of it. */
export function setMisfitMessage(found: { readonly misfit: FieldTypeMisfit; readonly valueType: string }): string {
  return `sets "${found.misfit.field}" to ${found.valueType} where ${found.misfit.cause}; the database would refuse the value or keep it as another type than declared`
}
