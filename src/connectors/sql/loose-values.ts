import type { FieldType } from '../../config/index.js'
import type { ColumnType } from './column-types.js'
import type { SqlDialectName } from './url.js'

/**
 * The fields whose column can hold a value the declared type cannot judge, so that a filter's SQL cannot be
 * the last word on them: a page read lets such values through, and `createPageJudge` judges them (counted as
 * not judged, or rechecked by the declared type). Every SQLite column holds any value (a string field's a REAL or
 * BLOB, shown otherwise than SQLite compares it). On the server engines only where the column's type admits other values: a boolean in a number column (MariaDB's BOOLEAN is
 * TINYINT(1), it takes a 2), tags in a text or JSON column (text that is no JSON, JSON that is no list), a
 * timestamp in a text column (another spelling than toISOString's, or no instant at all), an integer in a numeric,
 * DECIMAL or float column (1.5), a timestamp in a MySQL/MariaDB date column (`zeroDateFieldsOf`). A real boolean
 * or PostgreSQL timestamp column, and a number column under a number, keep the SQL's answer: no value of another
 * type fits there. `columns` null (the catalogue could not be read): on a server engine nothing is widened, the
 * read itself then says what is wrong.
 */
export function looseFieldsOf(declared: Readonly<Record<string, FieldType>>, columns: ReadonlyMap<string, ColumnType> | null, dialect: SqlDialectName): ReadonlySet<string> {
  const out = new Set<string>(zeroDateFieldsOf(declared, columns, dialect))
  for (const [field, type] of Object.entries(declared)) {
    // a string field too on SQLite: any column keeps a REAL or BLOB as such (NUMERIC affinity 1e20, a column of no
    // declared type 100.0), which SQLite compares as stored and a record shows otherwise ("100", a Buffer's JSON)
    if (dialect === 'sqlite') {
      out.add(field)
      continue
    }
    if (type === 'string') continue
    const column = columns?.get(field)
    const kind = column?.kind
    // an integer over a numeric column that is not an integer one (numeric, DECIMAL, a float) may meet a fraction
    if (type === 'integer' && kind === 'numeric' && column?.integer === false) out.add(field)
    if ((type === 'boolean' && kind === 'numeric') || (type === 'tags' && (kind === 'text' || kind === 'json')) || (type === 'timestamp' && kind === 'text')) out.add(field)
  }
  return out
}

/**
 * The timestamp fields over a MySQL/MariaDB DATE, DATETIME or TIMESTAMP column. Without NO_ZERO_DATE and
 * NO_ZERO_IN_DATE (or under a non-strict sql_mode, or ALLOW_INVALID_DATES) such a column keeps dates that name no
 * day ('0000-00-00', '2024-00-10', '2024-02-30'), shown as stored and named as not judged (`mysqlTypeCast`). The
 * engine compares them all the same ('0000-00-00' is before every date), so a clause's SQL would decide for them:
 * it lets them through, for the page judge to count.
 */
export function zeroDateFieldsOf(declared: Readonly<Record<string, FieldType>>, columns: ReadonlyMap<string, ColumnType> | null, dialect: SqlDialectName): ReadonlySet<string> {
  const out = new Set<string>()
  if (dialect !== 'mysql' || columns === null) return out
  for (const [field, type] of Object.entries(declared)) {
    if (type === 'timestamp' && MYSQL_DATES.test(columns.get(field)?.declared ?? '')) out.add(field)
  }
  return out
}

const MYSQL_DATES = /^(date|datetime|timestamp)$/i
