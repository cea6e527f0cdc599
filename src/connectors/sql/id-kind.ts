/**
 * Whether a stored id value, as the driver gave it, is one a record can show and a read, write or walk find again:
 * text, a number, a bigint, a boolean or a date (each shown as its text). Anything else (an object the driver made
 * of a json, geometry, interval or point value, an array, bytes) would be shown as its JavaScript text,
 * "[object Object]" for every row, several rows under one id, which no read or write finds again. Its kind, for
 * the refusal, or null where the value is an id. A typeof per row, nothing allocated for an id: a walk asks it of
 * every row. The catalogue's refusal by type name (`TableFacts.idRefusal`) is the early, friendly answer; this is
 * the guarantee, whatever the column's type name says.
 */
export function idKindRefused(value: unknown): string | null {
  switch (typeof value) {
    case 'string':
    case 'number':
    case 'bigint':
    case 'boolean':
      return null
    case 'object':
      if (value === null) return null
      if (value instanceof Date) return Number.isNaN(value.getTime()) ? 'an invalid date' : null
      if (value instanceof Uint8Array) return 'bytes'
      return Array.isArray(value) ? 'an array' : 'an object'
    default:
      return `a value of JavaScript type ${typeof value}`
  }
}

/** Why a page (or a read) holding a row whose id is of `kind` is refused: naming the column, the row and the kind. */
export function idKindMessage(endpoint: string, idField: string, kind: string, where: string): string {
  return `id column "${idField}" of ${endpoint} holds a value the driver gives as ${kind}, not as text or a number (${where}): its id would be that value made text ("[object Object]" for every such row, several rows under one id) and no read, write or walk could find its row again, so it is refused, not shown; choose another id column, or key the table by text (a generated column holding ${idField} as text under a unique index)`
}

/**
 * The first row of `rows` whose id is no id, as the refusal naming its position (1-based, `offset` rows before
 * the first), or null. `rows` whole: a page's row past its end is its next page's first.
 */
export function rowsIdRefusal(rows: readonly Readonly<Record<string, unknown>>[], endpoint: string, idField: string, what: string): string | null {
  for (let i = 0; i < rows.length; i++) {
    const kind = idKindRefused(rows[i]![idField])
    if (kind !== null) return idKindMessage(endpoint, idField, kind, `row ${i + 1} of ${what}`)
  }
  return null
}
