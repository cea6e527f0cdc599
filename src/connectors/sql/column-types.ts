import { sql, type CompiledQuery, type Kysely } from 'kysely'
import type { FieldType } from '../../config/index.js'
import type { FieldTypeMisfit, NumberColumn, StringColumn } from '../column-keeping.js'
import type { Row } from './backend.js'
import { fieldMisfits, FLOATING } from './field-misfits.js'
import { looseFieldsOf, zeroDateFieldsOf } from './loose-values.js'
import { membersOf } from './enum-members.js'
import { narrowTextOf, type NarrowText } from './mysql-charsets.js'
import { readAsOtherThanText } from './driver-values.js'
import { decimalOf, numberColumnsOf, stringColumnsOf } from './string-columns.js'
import { versionColumnRefusal } from './version-column-refusals.js'
import type { SqlDialectName } from './url.js'
import type { UpdateEffects } from './update-triggers.js'

/** How the engine compares a column's values: what a filter on it means. */
export type ColumnKind = 'numeric' | 'text' | 'boolean' | 'temporal' | 'json' | 'untyped' | 'other'

export interface ColumnType {
  /** The type as the table declares it, for messages. */
  readonly declared: string
  readonly kind: ColumnKind
  /** An integer column (SQLite INTEGER affinity, PostgreSQL smallint/integer/bigint, MySQL's INT types and YEAR). */
  readonly integer: boolean
  /** Digits of a second a date or timestamp column keeps (0 for whole seconds and for a date); null for any other. */
  readonly secondDigits: number | null
  /**
   * Whether the engine's `=` on the column is code-point equality of the value read. Not so on PostgreSQL for
   * char(n) (padding ignored), citext, a non-deterministic collation (case-insensitive), or any text type but
   * text, varchar and name, whose equality is not known to be.
   */
  readonly codePointEquality: boolean
  /** MySQL/MariaDB: the column's character set and collation where narrower than utf8mb4 (`narrowTextOf`). */
  readonly narrowText?: NarrowText | null
  /** A floating-point column (SQLite REAL affinity; PostgreSQL real, double precision; MySQL FLOAT, DOUBLE): exact integers end at 2^24 or 2^53. */
  readonly floating?: boolean
  /** The driver reads its values as bytes or a parsed value, not as the text the database compares (`readAsOtherThanText`). */
  readonly notText?: boolean
  /** PostgreSQL, MySQL/MariaDB: the most characters a char(n) or varchar(n) column (an ENUM, its longest value) keeps; null for any other. */
  readonly maxChars?: number | null
  /** PostgreSQL: a `real` column (or a domain over one), single precision, sent as its shortest text ("0.1"). */
  readonly singleFloat?: boolean
  /** PostgreSQL: a `date` column (or a domain over one), which reads a date-time compared with it as a date. */
  readonly dateOnly?: boolean
  /** PostgreSQL: a `timestamp` without time zone or a `date`, whose values a record shows as UTC (`utcWallClock`). */
  readonly zoneless?: boolean
  /** A decimal column (PostgreSQL numeric, MySQL DECIMAL): its digits in all and after the point, null where unset (`decimalOf`). */
  readonly decimal?: { readonly digits: number | null; readonly scale: number | null }
  /** MySQL/MariaDB ENUM (one member) or SET (`multiple`: members, comma-separated): the members as the table spells them (`membersOf`). */
  readonly members?: { readonly values: readonly string[]; readonly multiple: boolean }
  /**
   * PostgreSQL: a column of a domain (the catalogue names it by the domain, `account_id`): the type it is over, through domains
   * over domains, with its modifier (`numeric(8,2)`), and whether a domain of the chain has a CHECK no judgement covers.
   */
  readonly domain?: { readonly over: string; readonly checked: boolean }
  /** MySQL/MariaDB: an UNSIGNED integer or decimal column (its `column_type` says so; `data_type` does not). */
  readonly unsigned?: boolean
  /** MySQL/MariaDB: a column the table moves itself on every UPDATE (`ON UPDATE CURRENT_TIMESTAMP`, in `extra`). */
  readonly movesOnUpdate?: boolean
}

/** The type a column's values are of: a PostgreSQL domain's base type, else the type as declared. */
export function valueTypeOf(column: ColumnType): string {
  return column.domain?.over ?? column.declared
}

/** A configured `schema.table` (or `table`) as the catalogue names it; `regclass` quoted for PostgreSQL's `to_regclass`. */
export function catalogueName(table: string): { schema: string | null; name: string; regclass: string } {
  const dot = table.indexOf('.')
  const schema = dot < 0 ? null : table.slice(0, dot)
  const name = dot < 0 ? table : table.slice(dot + 1)
  const regclass = [schema, name].filter((p) => p !== null).map((p) => `"${p!.replace(/"/g, '""')}"`).join('.')
  return { schema, name, regclass }
}

/**
 * The query that lists a table's columns and their types, from the engine's own catalogue: SQLite's
 * `pragma_table_xinfo`, PostgreSQL's `pg_attribute` (a domain has its base type's category, and its base type's
 * precision in `base_type`), MySQL's and MariaDB's `information_schema.columns`. A `schema.table` name is
 * looked up in that schema.
 */
export function columnTypesQuery(dialect: SqlDialectName, db: Kysely<any>, table: string): CompiledQuery {
  const { schema, name, regclass } = catalogueName(table)
  if (dialect === 'sqlite') return sql`select name, type from pragma_table_xinfo(${name}, ${schema ?? 'main'})`.compile(db)
  if (dialect === 'postgres') {
    // a domain's typbasetype may be another domain, and only the domain over a base type carries its modifier: the
    // chain is followed to the base type, each domain's CHECK constraints counted on the way
    return sql`select a.attname as name, format_type(a.atttypid, a.atttypmod) as type, t.typcategory as category,
        format_type(base.oid, base.mod) as base_type, base.domains, base.checks,
        coalesce(to_jsonb(co) ->> 'collisdeterministic', 'true') = 'true' as deterministic
      from pg_attribute a join pg_type t on t.oid = a.atttypid left join pg_collation co on co.oid = a.attcollation
      cross join lateral (
        with recursive chain(oid, mod, depth) as (select a.atttypid, a.atttypmod, 0
          union all select d.typbasetype, d.typtypmod, chain.depth + 1 from chain join pg_type d on d.oid = chain.oid and d.typtype = 'd')
        select c.oid, c.mod, c.depth as domains, (select count(*) from pg_constraint k where k.contype = 'c' and k.contypid in (select oid from chain)) as checks
        from chain c order by c.depth desc limit 1
      ) base
      where a.attrelid = to_regclass(${regclass}) and a.attnum > 0 and not a.attisdropped`.compile(db)
  }
  return sql`select column_name as name, data_type as type, column_type, datetime_precision as second_digits, numeric_precision as digits, numeric_scale as scale, character_maximum_length as max_chars, character_set_name as charset, collation_name as collation, extra from information_schema.columns
    where table_schema = coalesce(${schema}, database()) and table_name = ${name}`.compile(db)
}

/** The catalogue's rows as column name → type. */
export function columnTypesOf(dialect: SqlDialectName, rows: readonly Row[]): Map<string, ColumnType> {
  const out = new Map<string, ColumnType>()
  for (const row of rows) {
    const declared = String(row.type ?? '')
    const domain = dialect === 'postgres' && Number(row.domains ?? 0) > 0 ? { over: String(row.base_type), checked: Number(row.checks ?? 0) > 0 } : undefined
    const kind = dialect === 'sqlite' ? sqliteKind(declared) : dialect === 'postgres' ? postgresKind(String(row.category ?? ''), domain?.over ?? declared) : mysqlKind(declared)
    const integer = dialect === 'sqlite' ? /INT/i.test(declared) : dialect === 'postgres' ? /^(smallint|integer|bigint)$/.test(domain?.over ?? declared) : MYSQL_INTEGER.has(declared.toLowerCase())
    const secondDigits = dialect === 'sqlite' ? null : dialect === 'postgres' ? postgresSecondDigits(String(row.base_type ?? '')) : mysqlSecondDigits(declared, row.second_digits)
    const codePointEquality = dialect !== 'postgres' || kind !== 'text' || (row.deterministic !== false && CODE_POINT_TEXT.test(String(row.base_type ?? '')))
    const narrowText = dialect === 'mysql' ? narrowTextOf(row.charset, row.collation) : null
    const dateOnly = dialect === 'postgres' && String(row.base_type ?? '') === 'date'
    const zoneless = dateOnly || (dialect === 'postgres' && /^timestamp(\(\d\))? without time zone$/.test(String(row.base_type ?? '')))
    const floating = dialect === 'sqlite' ? !integer && /REAL|FLOA|DOUB/i.test(declared) : FLOATING.test(dialect === 'postgres' ? String(row.base_type ?? '') : declared)
    const singleFloat = dialect === 'postgres' && String(row.base_type ?? '') === 'real'
    const maxChars = dialect === 'sqlite' ? null : dialect === 'postgres' ? postgresMaxChars(String(row.base_type ?? '')) : mysqlMaxChars(declared, row.max_chars)
    out.set(String(row.name), { declared: declared === '' ? '(no declared type)' : declared, kind, integer, secondDigits, codePointEquality, narrowText, dateOnly, zoneless, floating, singleFloat, maxChars, notText: readAsOtherThanText(dialect, row), decimal: decimalOf(dialect, row), ...membersOf(dialect, declared, row), ...(domain ? { domain } : {}), ...(dialect === 'mysql' && /\bunsigned\b/i.test(String(row.column_type ?? '')) ? { unsigned: true } : {}), ...(dialect === 'mysql' && /\bon update\b/i.test(String(row.extra ?? '')) ? { movesOnUpdate: true } : {}) })
  }
  return out
}

/**
 * PostgreSQL's text types whose `=` under a deterministic collation is byte equality. (`collisdeterministic` is read
 * through `to_jsonb` in columnTypesQuery: before PostgreSQL 12 there is no such column, and every collation is
 * deterministic.)
 */
const CODE_POINT_TEXT = /^(text|character varying(\(\d+\))?|name)$/

/** `timestamp(0) with time zone` keeps 0 digits; `timestamp` without a precision 6; a date none. */
function postgresSecondDigits(baseType: string): number | null {
  if (baseType === 'date') return 0
  const stamp = /^timestamp(?:\((\d)\))?/.exec(baseType)
  return stamp ? Number(stamp[1] ?? 6) : null
}

/** `character varying(20)`, `character(35)`: their n; an unbounded varchar or text none. */
function postgresMaxChars(baseType: string): number | null {
  const bounded = /^(?:character varying|character)\((\d+)\)$/.exec(baseType)
  return bounded ? Number(bounded[1]) : null
}

/** MySQL's catalogue gives every text column a length; only a char, varchar or enum is short enough to matter. */
function mysqlMaxChars(declared: string, length: unknown): number | null {
  return /^(char|varchar|enum|set)$/i.test(declared) && length !== null && length !== undefined ? Number(length) : null
}

function mysqlSecondDigits(declared: string, precision: unknown): number | null {
  const t = declared.toLowerCase()
  if (t === 'date') return 0
  if (t !== 'datetime' && t !== 'timestamp') return null
  return precision === null || precision === undefined ? 0 : Number(precision)
}

/** SQLite's column affinity, by its own rules (datatype3.html §3.1), in their order. */
export function sqliteKind(declared: string): ColumnKind {
  const t = declared.toUpperCase()
  if (t.includes('INT')) return 'numeric'
  if (t.includes('CHAR') || t.includes('CLOB') || t.includes('TEXT')) return 'text'
  if (t.includes('BLOB') || t === '') return 'untyped'
  // REAL, FLOAT, DOUBLE, and every other name (NUMERIC, DECIMAL, BOOLEAN, DATETIME): numeric affinity, under which
  // text that is no number (an ISO timestamp) stays text and compares as text
  return 'numeric'
}

function postgresKind(category: string, declared: string): ColumnKind {
  if (/^jsonb?$/.test(declared)) return 'json'
  switch (category) {
    case 'N':
      return 'numeric'
    case 'S':
      return 'text'
    case 'B':
      return 'boolean'
    case 'D':
      return 'temporal'
    default:
      return 'other'
  }
}

const MYSQL_NUMERIC = new Set(['tinyint', 'smallint', 'mediumint', 'int', 'integer', 'bigint', 'decimal', 'numeric', 'float', 'double', 'real', 'bit', 'year'])
const MYSQL_INTEGER = new Set(['tinyint', 'smallint', 'mediumint', 'int', 'integer', 'bigint', 'year'])
const MYSQL_TEXT = new Set(['char', 'varchar', 'tinytext', 'text', 'mediumtext', 'longtext', 'enum', 'set'])
const MYSQL_TEMPORAL = new Set(['date', 'datetime', 'timestamp', 'time'])

function mysqlKind(declared: string): ColumnKind {
  const t = declared.toLowerCase()
  if (MYSQL_NUMERIC.has(t)) return 'numeric'
  if (MYSQL_TEXT.has(t)) return 'text'
  if (MYSQL_TEMPORAL.has(t)) return 'temporal'
  if (t === 'json') return 'json'
  return 'other'
}

/** What the catalogue says of a resource's columns: what no filter can trust, and what must compare as text. */
export interface ColumnFacts extends UpdateEffects {
  readonly misfits: readonly FieldTypeMisfit[]
  /**
   * String fields over a column that does not hold text: compared as `cast(column as text)`; `true` for an
   * integer column, where equality with an integer's own digits ("2134", never "02134") may stay a plain
   * comparison, on the column's index.
   */
  readonly comparedAsText: ReadonlyMap<string, boolean>
  /** Fields whose column can hold values of another type than declared, judged in memory (`looseFieldsOf`). */
  readonly looseValues: ReadonlySet<string>
  /** Timestamp fields over a MySQL/MariaDB date column, which may hold a date naming no day (`zeroDateFieldsOf`). */
  readonly zeroDates: ReadonlySet<string>
  /**
   * String fields over a column whose `=` is not code-point equality (`ColumnType.codePointEquality`): compared
   * as `cast(column as text) collate "C"`, as `matchesFilter` compares the value a record shows.
   */
  readonly comparedByCodePoint: ReadonlySet<string>
  /**
   * Number and integer fields over a MySQL/MariaDB column the server compares with a number otherwise than a record
   * shows it (`compileFilter` compares the value shown): a FLOAT is sent as its shortest text ("0.1"), which a record
   * shows, and compared as the double it keeps (0.100000001…), and so is a PostgreSQL real; a YEAR is shown as the year (2024) and reads a number
   * 1 to 99 it is compared with as a year (24 as 2024, 99 as 1999). Timestamp fields over a column keeping more than
   * milliseconds (MySQL DATETIME(6), TIMESTAMP(6); PostgreSQL timestamptz, 6 digits unless told): a record shows the
   * millisecond (12:00:00.000500 as 12:00:00.000Z). Timestamp fields over a PostgreSQL `date` column: a record shows
   * its midnight in UTC, while PostgreSQL reads the instant compared with it as a date, its time dropped (`d <
   * 2024-06-01T12:00Z` left out the row shown as 2024-06-01T00:00Z): compared as a timestamp.
   */
  readonly comparedAsShown?: ReadonlyMap<string, ShownAs>
  /** String fields over columns of integers, decimals or booleans, which keep only some strings as written (`stringColumnsOf`). */
  readonly stringColumns?: readonly StringColumn[]
  /** Number fields over columns of integers or fixed-point decimals, which keep only some numbers exactly (`numberColumnsOf`). */
  readonly numberColumns?: readonly NumberColumn[]
  /** Fields over a MySQL/MariaDB column of a character set narrower than utf8mb4, with it (see `textParam`). */
  readonly narrowText?: ReadonlyMap<string, NarrowText>
  /** Why the version column cannot move on every write, so no write may be made (see `coarseVersion`); null when it can. */
  readonly versionProblem: string | null
  /** The id column as the catalogue shows it (null where the table declares none by that name): how an id is bound (`serverIdBinding`). */
  readonly idColumn?: ColumnType | null
  /** The version column as the catalogue shows it: how an expected timestamp version is matched (`versionCondition`). */
  readonly versionColumn?: ColumnType | null
  /** Declared fields over a column the table moves on every UPDATE (`ColumnType.movesOnUpdate`): a write not setting one changes it unapproved. */
  readonly movedOnUpdate?: readonly string[]
}

/** The resource as the catalogue's facts are judged against it. */
export interface DeclaredTable {
  readonly fields: Readonly<Record<string, FieldType>>
  readonly versionField: string
  readonly table: string
  readonly idField?: string
}

export function columnFactsOf(resource: DeclaredTable, columns: ReadonlyMap<string, ColumnType>, dialect: SqlDialectName, effects: UpdateEffects): ColumnFacts {
  const endpoint = `table ${resource.table}`
  return {
    misfits: fieldMisfits(resource.fields, columns, dialect, endpoint),
    stringColumns: stringColumnsOf(resource.fields, columns, dialect, endpoint),
    numberColumns: numberColumnsOf(resource.fields, columns, dialect, endpoint),
    comparedAsText: textCompared(resource.fields, columns, dialect),
    looseValues: looseFieldsOf(resource.fields, columns, dialect),
    zeroDates: zeroDateFieldsOf(resource.fields, columns, dialect),
    comparedByCodePoint: new Set(Object.keys(resource.fields).filter((f) => resource.fields[f] === 'string' && columns.get(f)?.codePointEquality === false)),
    narrowText: new Map(Object.keys(resource.fields).flatMap((f) => {
      const narrow = columns.get(f)?.narrowText
      return narrow ? [[f, narrow] as const] : []
    })),
    comparedAsShown: new Map(
      Object.keys(resource.fields).flatMap((f): [string, ShownAs][] => {
        const column = columns.get(f)
        const declared = (column?.declared ?? '').toLowerCase()
        if (dialect === 'sqlite') return []
        if (resource.fields[f] === 'timestamp' && column?.kind === 'temporal' && (column.secondDigits ?? 0) > 3) return [[f, 'micros']]
        if (resource.fields[f] === 'timestamp' && column?.dateOnly === true) return [[f, 'day']]
        // a PostgreSQL real (or a domain over one) is a single-precision value too, sent as its shortest text
        if (dialect === 'postgres' && NUMBERS.has(resource.fields[f]!) && column?.singleFloat === true) return [[f, 'float']]
        return dialect === 'mysql' && NUMBERS.has(resource.fields[f]!) && (declared === 'float' || declared === 'year') ? [[f, declared]] : []
      }),
    ),
    versionProblem: versionColumnRefusal(resource, columns.get(resource.versionField), dialect),
    changedAfterUpdate: effects.changedAfterUpdate,
    generatedFields: effects.generatedFields,
    idColumn: resource.idField === undefined ? null : (columns.get(resource.idField) ?? null),
    versionColumn: columns.get(resource.versionField) ?? null,
    movedOnUpdate: Object.keys(resource.fields).filter((f) => columns.get(f)?.movesOnUpdate === true),
  }
}

/**
 * The string fields whose column does not hold text. A record shows such a value as text ("2134"); the engine
 * would compare the column as it is: SQLite gives a filter's "02134" the column's numeric affinity (2134, a
 * match), or finds integer 2134 unequal to text "2134" in a column of no type; PostgreSQL reads "02134" as the
 * integer 2134. Compared as text, the engine answers as the record reads. (MySQL compares strings as bytes
 * already.)
 */
function textCompared(declared: Readonly<Record<string, FieldType>>, columns: ReadonlyMap<string, ColumnType>, dialect: SqlDialectName): Map<string, boolean> {
  const out = new Map<string, boolean>()
  if (dialect === 'mysql') return out
  for (const [field, type] of Object.entries(declared)) {
    const column = columns.get(field)
    if (type === 'string' && column !== undefined && column.kind !== 'text') out.set(field, column.integer)
  }
  return out
}

const NUMBERS: ReadonlySet<FieldType> = new Set(['number', 'integer'])

/** A column compared as a record shows it (`ColumnFacts.comparedAsShown`); 'float' also a PostgreSQL real. */
export type ShownAs = 'float' | 'year' | 'micros' | 'day'
