import type { FieldType } from '../../config/index.js'
import type { ColumnType } from './column-types.js'
import type { SqlDialectName } from './url.js'

/**
 * The fields whose column can hold a value the declared type cannot judge, so that a filter's SQL cannot be
 * the last word on them: a page read lets such values through, and `createPageJudge` judges them (counted as
 * not judged, or rechecked by the declared type). Every SQLite column holds any value. On the server engines
 * only where the column's type admits other values: a boolean in a number column (MariaDB's BOOLEAN is
 * TINYINT(1), it takes a 2), tags in a text or JSON column (text that is no JSON, JSON that is no list), a
 * timestamp in a text column (another spelling than toISOString's, or no instant at all), an integer in a numeric,
 * DECIMAL or float column (1.5). A real boolean or
 * timestamp column, and a number column under a number, keep the SQL's answer: no value of another type fits
 * there. `columns` null (the catalogue could not be read): on a server engine nothing is widened, the read
 * itself then says what is wrong.
 */
export function looseFieldsOf(declared: Readonly<Record<string, FieldType>>, columns: ReadonlyMap<string, ColumnType> | null, dialect: SqlDialectName): ReadonlySet<string> {
  const out = new Set<string>()
  for (const [field, type] of Object.entries(declared)) {
    if (type === 'string') continue
    if (dialect === 'sqlite') {
      out.add(field)
      continue
    }
    const column = columns?.get(field)
    const kind = column?.kind
    // an integer over a numeric column that is not an integer one (numeric, DECIMAL, a float) may meet a fraction
    if (type === 'integer' && kind === 'numeric' && column?.integer === false) out.add(field)
    if ((type === 'boolean' && kind === 'numeric') || (type === 'tags' && (kind === 'text' || kind === 'json')) || (type === 'timestamp' && kind === 'text')) out.add(field)
  }
  return out
}
