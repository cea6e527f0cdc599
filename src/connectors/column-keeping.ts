/**
 * What a typed column keeps of the values a declared field sets into it: the declared fields whose column is another
 * type (a misfit), and the string and number fields over columns that keep only some values exactly as written.
 * A connector with column types (sql) reads these from its catalogue; the plans and checks judge set values by them.
 */

/** A declared field its upstream holds as another type: a filter on it is refused, saying this. */
export interface FieldTypeMisfit {
  readonly field: string
  /** The column's type as the catalogue names it (`integer`, `TEXT`). */
  readonly column: string
  /** What the field is declared, what the column is, and how the engine compares it. */
  readonly cause: string
  /** The cause, what it means for filters, and the fix. */
  readonly problem: string
  /**
   * What a config can do: declare the field as one of the types the column fits ("declare it timestamp, or change
   * the column"), or, where none does, say so (filters on it stay refused) and leave the field out or change the column.
   */
  readonly fix: string
}

/**
 * A field declared `string` over a column of integers, decimals or booleans: no misfit (a filter compares the text a
 * record shows), yet the column keeps only some strings as written ("42" in an integer column; "abc" is refused, or
 * kept as TEXT among integers on SQLite; "042" comes back "42"). `setStringMisfit` judges a value set into it.
 */
export interface StringColumn {
  readonly field: string
  /** The column's type as the catalogue names it. */
  readonly column: string
  /** What the field is declared and what the column is, in the words of `FieldTypeMisfit.cause`. */
  readonly cause: string
  readonly keeps: StringKeeping
  /**
   * The column keeps any other string as TEXT, exactly as written (SQLite: every column holds any value): one read
   * from it is put back as it was. Absent: the column holds no string otherwise than `keeps` says (PostgreSQL, MariaDB).
   */
  readonly holdsOtherText?: true
}

/**
 * A number or integer field over a column that keeps only some numbers exactly (its bounds, its digits and scale;
 * `single`, a PostgreSQL real or a MySQL/MariaDB FLOAT: those its single-precision value reads back as written, the
 * server sending at most `shownDigits` significant digits where it cuts them, MariaDB's 6; `unsigned`: none below 0).
 */
export interface NumberColumn {
  readonly field: string
  /** The column's type as the catalogue names it. */
  readonly column: string
  /** Which column it is, in words: `column "amount" of table invoices is numeric(12,2)`. */
  readonly cause: string
  readonly keeps: Exclude<StringKeeping, { readonly as: 'boolean' } | { readonly as: 'members' } | { readonly as: 'instant' } | { readonly as: 'uuid' }> | { readonly as: 'single'; readonly shownDigits?: number; readonly unsigned?: true }
}

/**
 * Which strings a column keeps exactly as written: an integer's own digits within the column's bounds; a plain
 * decimal with the column's digits after the point (`scale`, where known) and at most `digits` in all, or one a
 * JavaScript number spells back the same (`asNumber`, SQLite's REAL); a boolean's own spellings; an ENUM's or SET's members.
 */
export type StringKeeping =
  | { readonly as: 'integer'; readonly min: string; readonly max: string }
  | { readonly as: 'decimal'; readonly digits: number | null; readonly scale: number | null; readonly asNumber: boolean; readonly unsigned?: true }
  | { readonly as: 'boolean'; readonly spellings: readonly string[] }
  /** A MySQL/MariaDB ENUM (one of `values`) or SET (`multiple`: distinct values, comma-separated, in their order, or ""). */
  | { readonly as: 'members'; readonly values: readonly string[]; readonly multiple: boolean }
  /**
   * A timestamp field over a date or timestamp column keeping fewer digits of a second than a record shows (PostgreSQL
   * timestamp(0) to (2), MySQL DATETIME without fractions): an instant with no digit past `secondDigits`; `day`, a date
   * column: midnight UTC.
   */
  | { readonly as: 'instant'; readonly secondDigits: number; readonly day: boolean }
  /** A uuid column: its own spelling, lowercase hex in 8-4-4-4-12 (capitals and braces are read back otherwise). */
  | { readonly as: 'uuid' }
