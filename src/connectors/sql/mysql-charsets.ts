import { sql, type RawBuilder } from 'kysely'

/** A MySQL/MariaDB text column's character set and collation, where the set is narrower than the connection's utf8mb4. */
export interface NarrowText {
  readonly charset: string
  readonly collation: string
}

const NAME = /^[a-z0-9_]+$/i

/**
 * The character set and collation of a MySQL/MariaDB column as the catalogue names them, where a string can hold
 * characters the column cannot (latin1, utf8mb3, ascii…); null for utf8mb4, for a column of no character set, and for
 * names no statement could quote.
 */
export function narrowTextOf(charset: unknown, collation: unknown): NarrowText | null {
  if (typeof charset !== 'string' || typeof collation !== 'string' || !NAME.test(charset) || !NAME.test(collation)) return null
  return /^(utf8mb4|binary)$/i.test(charset) ? null : { charset, collation }
}

/**
 * A string compared by a MySQL/MariaDB text column's own `=` (on its index). The connection sends utf8mb4; against
 * a column of a narrower set MariaDB fails the statement on a value holding a character the set lacks ("Illegal mix
 * of collations" for '😀' and a latin1 column), though no row holds it. Converted to the column's set and collation
 * first, such a character becomes '?', which narrows to the rows holding '?': the byte comparison beside every such
 * `=` (compile.ts `compileMysqlString`) then keeps none of them, and a value the set holds converts exactly.
 */
export function textParam(value: unknown, narrow: NarrowText | null | undefined): RawBuilder<unknown> {
  if (!narrow) return sql`${value}`
  return sql`convert(${value} using ${sql.raw(narrow.charset)}) collate ${sql.raw(narrow.collation)}`
}
