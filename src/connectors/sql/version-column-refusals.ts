import type { ColumnType, DeclaredTable } from './column-types.js'
import type { SqlDialectName } from './url.js'

/**
 * Why the version column cannot move on every write, so no write may be made; null when it can. Read from the
 * catalogue before any write (`ColumnFacts.versionProblem`), and reported by `warrant check` under conditional_writes.
 */
export function versionColumnRefusal(resource: DeclaredTable, column: ColumnType | undefined, dialect: SqlDialectName): string | null {
  return coarseVersion(resource, column, dialect) ?? untextualVersion(resource, column, dialect) ?? shortVersion(resource, column, dialect) ?? floatVersion(resource, column)
}

/**
 * A timestamp version column that keeps less than milliseconds. A write sets the next version a millisecond or
 * more past the last (version.ts `nextVersion`); such a column rounds it back to the same second (or day), the
 * version does not move, and a writer still holding the old version would then overwrite that write unseen.
 */
function coarseVersion(resource: DeclaredTable, column: ColumnType | undefined, dialect: SqlDialectName): string | null {
  if (resource.fields[resource.versionField] !== 'timestamp' || column?.secondDigits == null || column.secondDigits >= 3) return null
  const field = resource.versionField
  const keeps = column.kind === 'temporal' && /^date$/i.test(column.declared) ? 'keeps days only' : column.secondDigits === 0 ? 'keeps whole seconds' : `keeps ${column.secondDigits} digit(s) of a second`
  const fix =
    dialect === 'postgres'
      ? `alter table ${resource.table} alter column ${field} type ${/without time zone/.test(column.declared) ? 'timestamp' : 'timestamptz'}(3)`
      : `alter table ${resource.table} modify ${field} ${/^timestamp$/i.test(column.declared) ? 'timestamp' : 'datetime'}(3)`
  return (
    `the version column "${field}" of table ${resource.table} is ${column.declared}, which ${keeps}: a write within the same second would leave the version unchanged, ` +
    `and a writer still holding that version would then overwrite the write unseen, so no write to it is made; ` +
    `make the column keep milliseconds (${fix}), or version the resource by an integer column every write moves`
  )
}

/**
 * A `string` version over a column that cannot keep the UUID a write sets as the next version (`nextVersion`): a
 * server engine's number, date, boolean or JSON column. MySQL without STRICT keeps the UUID's leading digits or a
 * zero date, a version no one handed out, and the write would be answered as made; in strict mode, and on
 * PostgreSQL, every write fails. SQLite keeps text in any column, and a PostgreSQL uuid column keeps a UUID.
 */
function untextualVersion(resource: DeclaredTable, column: ColumnType | undefined, dialect: SqlDialectName): string | null {
  if (resource.fields[resource.versionField] !== 'string' || column === undefined || dialect === 'sqlite') return null
  if (column.kind !== 'numeric' && column.kind !== 'temporal' && column.kind !== 'boolean' && column.kind !== 'json') return null
  const field = resource.versionField
  const as = column.kind === 'numeric' && column.integer ? 'integer' : column.kind === 'temporal' ? 'timestamp' : null
  return (
    `the version column "${field}" of table ${resource.table} is ${column.declared}, which cannot hold the text versions a string version_field writes (a UUID): ` +
    `the database would refuse or convert each one, so no write to it is made; declare version_field's field as the column is` +
    (as === null ? '' : ` (fields.${field}: ${as})`) +
    `, or version the resource by a text column`
  )
}

/** The characters of the UUID a string version_field's write sets (`nextVersion`). */
const UUID_CHARS = 36

/**
 * A `string` version over a char(n) or varchar(n) column shorter than the UUID a write sets (`nextVersion`):
 * PostgreSQL fails every write ("value too long"), MySQL/MariaDB in strict mode too, and without STRICT keeps the
 * UUID's first n characters, a version no one handed out, the write answered as made. Such a column is most often a
 * business value named version by mistake (`plan varchar(20)`), which every write would overwrite. SQLite keeps
 * text of any length in any column.
 */
function shortVersion(resource: DeclaredTable, column: ColumnType | undefined, dialect: SqlDialectName): string | null {
  if (resource.fields[resource.versionField] !== 'string' || column?.maxChars == null || column.maxChars >= UUID_CHARS || dialect === 'sqlite') return null
  const field = resource.versionField
  const declared = /\(/.test(column.declared) ? column.declared : `${column.declared}(${column.maxChars})`
  const widen = dialect === 'postgres' ? `alter table ${resource.table} alter column ${field} type varchar(${UUID_CHARS})` : `alter table ${resource.table} modify ${field} varchar(${UUID_CHARS})`
  return (
    `the version column "${field}" of table ${resource.table} is ${declared}, which keeps at most ${column.maxChars} characters, fewer than the ${UUID_CHARS} of the UUID a string version_field writes: ` +
    `the database would refuse or cut each one, so no write to it is made; version the resource by a column that means nothing else and changes on every write (a counter, updated_at), ` +
    `or, if "${field}" is such a column, widen it (${widen})`
  )
}

/**
 * An integer version over a floating-point column, which keeps integers exactly only up to 2^24 (PostgreSQL real,
 * MySQL FLOAT) or 2^53: there `version + 1` rounds back to the version, the write is made and the version does
 * not move (answered `unknown` only after it committed), and a writer still holding that version overwrites it.
 */
function floatVersion(resource: DeclaredTable, column: ColumnType | undefined): string | null {
  if (resource.fields[resource.versionField] !== 'integer' || column?.floating !== true) return null
  const field = resource.versionField
  return (
    `the version column "${field}" of table ${resource.table} is ${column.declared}, a floating-point type that keeps integers exactly only up to 2^24 (real, FLOAT) or 2^53 (double): ` +
    `past that a write's next version (version + 1) rounds back to the version, the write would be made without moving it, and a writer still holding that version would then overwrite the write unseen, so no write to it is made; ` +
    `declare the column an integer type (bigint), or version the resource by an integer column every write moves`
  )
}
