import type { Row } from './backend.js'
import type { SqlDialectName } from './url.js'

/**
 * Whether the driver reads a column's values as something else than text or a number: bytes (PostgreSQL bytea,
 * MySQL/MariaDB BINARY, VARBINARY, BLOB types), a value it parses (PostgreSQL json, jsonb, interval, point, circle,
 * an array; a domain over one), a MySQL BIT read as the number its bits spell, a geometry. A `string` field shows
 * such a value as JSON of what the driver built ('{"type":"Buffer","data":[0,255]}', '{"days":1}', "[1,2]", "10"),
 * which is not the text or bytes the database compares (`misfitOf`). `row` is one catalogue row (`columnTypesQuery`).
 */
export function readAsOtherThanText(dialect: SqlDialectName, row: Row): boolean {
  if (dialect === 'postgres') return PG_OTHER.test(String(row.base_type ?? ''))
  return dialect === 'mysql' && MYSQL_OTHER.test(String(row.type ?? ''))
}

const PG_OTHER = /^(bytea|jsonb?|interval.*|point|circle)$|\[\]$/
const MYSQL_OTHER = /^(binary|varbinary|tinyblob|blob|mediumblob|longblob|bit|geometry|point|linestring|polygon|multipoint|multilinestring|multipolygon|geometrycollection)$/i
