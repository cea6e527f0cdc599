import { sql, type RawBuilder } from 'kysely'
import type { Clause } from '../../contract/index.js'
import type { FieldType } from '../../config/index.js'
import type { SqlDialectName } from './url.js'

/* The SQL that says which stored values a clause cannot judge: let through on a page read, held by no precondition (see compileFilter). */

/** toISOString's spelling, as a GLOB: the only text SQLite can order as the instants it names. */
const ISO_TEXT = '[0-9][0-9][0-9][0-9]-[0-1][0-9]-[0-3][0-9]T[0-2][0-9]:[0-5][0-9]:[0-5][0-9].[0-9][0-9][0-9]Z'
/**
 * toISOString's spelling of a real instant, as a regular expression (PostgreSQL's `~`, MySQL's REGEXP, there
 * made case-sensitive): text that is no date (30 February) would be compared, and dropped, as if it were one. A
 * 29 February is left to the page judge (a leap year is more than a pattern says well).
 */
const ISO_PATTERN =
  '^[0-9]{4}-((0[1-9]|1[0-2])-(0[1-9]|1[0-9]|2[0-8])|(0[13-9]|1[0-2])-(29|30)|(0[13578]|1[02])-31)T([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9][.][0-9]{3}Z$'
/**
 * A JSON list of strings without escapes or control characters, blanks as JSON allows them: text PostgreSQL
 * casts to jsonb without failing the statement, and compares as `JSON.parse` reads it (MariaDB's JSON_CONTAINS too). Any other text (no JSON,
 * JSON that is no list, a list holding numbers or escapes) is judged in memory.
 */
const PLAIN_TAG_LIST = String.raw`^[ \t\n\r]*\[[ \t\n\r]*("[^"\\[:cntrl:]]*"[ \t\n\r]*(,[ \t\n\r]*"[^"\\[:cntrl:]]*"[ \t\n\r]*)*)?\][ \t\n\r]*$`

/**
 * The rows whose value under a field of `type` a clause's SQL cannot judge (null where it judges every one, or for
 * tags, whose CASE is `tagsJudged`'s): a page read lets them through for the page judge; a write's precondition
 * holds on none (see compileFilter). `zeroDates`: the column is a MySQL/MariaDB date one, whose dates naming no day
 * the engine compares as if they named one. May be NULL for a NULL value, which no comparison meets anyway.
 */
export function unjudgeable(field: string, type: FieldType, dialect: SqlDialectName, zeroDates: boolean): RawBuilder<unknown> | null {
  const column = sql.ref(field)
  switch (type) {
    case 'timestamp':
      if (zeroDates) return namingNoDay(field)
      // only toISOString's spelling compares as the instant it names: as text on SQLite and PostgreSQL ("2024-06-01
      // 13:00:00" sorts before "2024-06-01T12:00:00Z"), as a DATETIME on MySQL (which reads no offset)
      if (dialect === 'sqlite') return sql`not (${column} glob ${ISO_TEXT})`
      if (dialect === 'postgres') return sql`not (${column} ~ ${ISO_PATTERN})`
      return sql`not (${column} regexp ${`(?-i)${ISO_PATTERN}`})`
    case 'boolean':
      // a boolean is 0 or 1: a 2 is neither true nor false
      if (dialect === 'sqlite') return sql`(${column} is not null and (typeof(${column}) <> 'integer' or ${column} not in (0, 1)))`
      return sql`(${column} is not null and ${column} not in (0, 1))`
    case 'integer':
      // a fraction (1.5 in a numeric or float column, a REAL SQLite kept in an INTEGER one) is no integer, whatever the clause
      if (dialect === 'sqlite') return sql`(typeof(${column}) in ('text', 'blob') or (typeof(${column}) = 'real' and ${column} <> round(${column})))`
      return sql`(${column} is not null and ${column} <> floor(${column}))`
    case 'string':
      // a REAL or BLOB SQLite compares as stored ("100.0", "1.0e+20", bytes), a record shows as "100",
      // "100000000000000000000", a Buffer's JSON: a REAL is judged on the value a record shows, bytes counted as not
      // judged (`createPageJudge`), as a filter on a bytea or BLOB column is refused
      return dialect === 'sqlite' ? sql`typeof(${column}) in ('real', 'blob')` : null
    case 'number':
      // SQLite orders text and bytes above every number: a number stored as text is judged on its normalised value
      return dialect === 'sqlite' ? sql`typeof(${column}) in ('text', 'blob')` : null
    case 'tags':
      return null
  }
}

/** A clause widened to also pass the rows whose value it cannot judge (`unjudgeable`; see compileFilter). */
export function letThrough(compiled: RawBuilder<unknown>, clause: Clause, type: FieldType, dialect: SqlDialectName, zeroDates: boolean): RawBuilder<unknown> {
  if (type === 'tags') return tagsJudged(compiled, clause.field, dialect, true)
  const unjudged = unjudgeable(clause.field, type, dialect, zeroDates)
  return unjudged === null ? compiled : sql`(${compiled} or ${unjudged})`
}

/**
 * A precondition's clause narrowed to hold on none of the rows whose value it cannot judge (`unjudgeable`; see
 * compileFilter): a value SQLite keeps as text under a number, a boolean 2, a timestamp in another spelling, tags
 * that are not a plain JSON list (whose SQL would otherwise fail the statement, or find "vip" in the JSON string "vip").
 */
export function heldOnlyWhenJudged(compiled: RawBuilder<unknown>, clause: Clause, type: FieldType, dialect: SqlDialectName, zeroDates: boolean): RawBuilder<unknown> {
  if (type === 'tags') return tagsJudged(compiled, clause.field, dialect, false)
  const unjudged = unjudgeable(clause.field, type, dialect, zeroDates)
  return unjudged === null ? compiled : sql`(${compiled} and not coalesce(${unjudged}, false))`
}

/**
 * json_each (SQLite) fails the whole statement on text that is no JSON, and so does PostgreSQL's cast (MySQL's
 * JSON_CONTAINS too); json_each and JSON_CONTAINS find "vip" in the JSON string "vip", no list: such a row is not
 * the SQL's to judge. CASE tries its conditions in order, so nothing later sees it: it passes (`pass`, a page
 * read's, for the page judge to count) or fails (a precondition's).
 */
function tagsJudged(compiled: RawBuilder<unknown>, field: string, dialect: SqlDialectName, pass: boolean): RawBuilder<unknown> {
  const column = sql.ref(field)
  const other = sql.raw(pass ? '1' : '0')
  if (dialect === 'sqlite') return sql`(case when not json_valid(${column}) then ${other} when json_type(${column}) <> 'array' then ${other} else ${compiled} end)`
  // MariaDB's JSON_CONTAINS finds no "1" in [1] nor "v" in ["\u0076"], tags a record shows there: only a plain list is its to judge
  if (dialect === 'mysql') return sql`(case when not json_valid(${column}) then ${other} when json_type(${column}) <> 'ARRAY' then ${other} when not (${column} regexp ${PLAIN_TAG_LIST}) then ${other} else ${compiled} end)`
  return sql`(case when cast(${column} as text) ~ ${PLAIN_TAG_LIST} then ${compiled} else ${pass ? sql`${column} is not null` : sql`false`} end)`
}

/**
 * A MySQL/MariaDB date that names no day: a zero month or day ('0000-00-00', '2024-00-10'), or a day past the
 * month's last (ALLOW_INVALID_DATES' '2024-02-30', whose LAST_DAY is the 29th). MONTH and DAYOFMONTH read the parts
 * as stored, whatever the session's sql_mode. False for NULL.
 */
export function namingNoDay(field: string): RawBuilder<unknown> {
  const column = sql.ref(field)
  return sql`(${column} is not null and (month(${column}) = 0 or dayofmonth(${column}) = 0 or dayofmonth(${column}) > dayofmonth(last_day(${column}))))`
}
