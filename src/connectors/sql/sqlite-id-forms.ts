import { sql, type RawBuilder, type SqlBool } from 'kysely'

/**
 * The values a SQLite id column may hold under an id as a record shows it. SQLite keeps each value in the storage
 * class its column's affinity gives it: a TEXT column keeps 1 as '1', a column of no type or BLOB keeps the
 * integer 1, the real 1.0 and the text '1' apart (all three are shown as "1"), a REAL one keeps 1 as 1.0. One
 * parameter cannot meet them all: the text '1' never equals the integer 1 in a column of no type, and the driver
 * binds every JavaScript number as a real, which a TEXT column compares as '1.0'. So an id is sent as its text and,
 * where it is a number's own spelling, as that number too (an integer exactly, as a 64-bit integer).
 */
export function sqliteIdForms(id: string): { readonly text: string; readonly number: bigint | number | null } {
  if (INTEGER.test(id)) {
    const exact = BigInt(id)
    if (exact >= INT64_MIN && exact <= INT64_MAX) return { text: id, number: exact }
  }
  // a real is shown as JavaScript spells the number ("1.5", "1e+21"): only that spelling names it
  const n = Number(id)
  return { text: id, number: id.trim() !== '' && String(n) === id && !Number.isNaN(n) ? n : null }
}

const INTEGER = /^(0|-?[1-9][0-9]*)$/
const INT64_MIN = -(2n ** 63n)
const INT64_MAX = 2n ** 63n - 1n

/**
 * Every form of `ids` (`sqliteIdForms`), for `column in (…)`: the rows the engine's own comparison finds for them,
 * on the column's index. Wider than the ids: a NOCASE column finds "A" for "a", an INTEGER one the row 1 for
 * "01". Read with the rows told apart by the id each shows (read-by-ids.ts), or narrowed by `sqliteExactIds`.
 */
export function sqliteIdsIn(column: string, ids: readonly string[]): RawBuilder<SqlBool> {
  const forms = ids.flatMap((id) => {
    const { text, number } = sqliteIdForms(id)
    return number === null ? [text] : [text, number]
  })
  return sql<SqlBool>`${sql.ref(column)} in (${sql.join(forms)})`
}

/**
 * The rows whose id, as a record shows it, is one of `ids` exactly, and no other: text under BINARY (not the
 * column's NOCASE or RTRIM), a number by value (the real 1.0 is shown as "1", as the integer 1 is; "01" names
 * neither). A row holding bytes is shown as no id a read could name, and matches none.
 */
export function sqliteExactIds(column: string, ids: readonly string[]): RawBuilder<SqlBool> {
  const ref = sql.ref(column)
  const texts = ids.map((id) => sql.val(id))
  const numbers = ids.map((id) => sqliteIdForms(id).number).filter((n) => n !== null)
  const numeric = numbers.length === 0 ? sql`0` : sql`(typeof(${ref}) in ('integer', 'real') and ${ref} in (${sql.join(numbers.map((n) => sql.val(n)))}))`
  return sql<SqlBool>`(${sqliteIdsIn(column, ids)} and ((typeof(${ref}) = 'text' and ${ref} collate binary in (${sql.join(texts)})) or ${numeric}))`
}
