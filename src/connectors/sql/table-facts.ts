import { sql, type CompiledQuery, type Kysely } from 'kysely'
import type { TableProblem } from '../connector.js'
import type { Row } from './backend.js'
import { sqliteKind } from './column-types.js'
import type { SqlDialectName } from './url.js'

/**
 * What the engine's catalogue says of the table as a whole, beyond its column types: whether the id column names
 * one row each, whether the table keeps transactions, and whether its ids survive being read into JavaScript.
 */
export interface TableFacts {
  /**
   * The id column is the table's only primary key column, or carries a valid, non-partial unique index on exactly
   * that column: no two rows with an id are equal under the engine's own comparison. False for a view, a table
   * without a key, a unique index over several columns: not proven, so a walk checks every page for it.
   */
  readonly idUnique: boolean
  /**
   * The id column may hold NULL (a unique index allows many; so does a SQLite primary key that is not an INTEGER).
   * A row without an id names no record: a walk leaves such rows out of its pages and counts them instead.
   */
  readonly idNullable: boolean
  /**
   * The table's engine undoes a ROLLBACK and pins a snapshot (InnoDB; every SQLite and PostgreSQL table). False for
   * MySQL/MariaDB MyISAM, Aria, MEMORY: an UPDATE there is durable the moment it runs.
   */
  readonly transactional: boolean
  /** Why no write to this table can be reported truthfully (a non-transactional engine), with the fix; or null. */
  readonly writeRefusal: string | null
  /** Why the id column cannot name records (timestamps finer than JavaScript's milliseconds), with the fix; or null. */
  readonly idRefusal: string | null
  /**
   * Where `idUnique` is proven by a unique index under another comparison than the column's own (SQLite: the
   * index's collation, always named; PostgreSQL: an index on `id COLLATE "C"` over a case-insensitive column), that
   * collation as SQL: a walk orders and resumes under it, or `id > 'a'` in the column's comparison skips "A",
   * which the index lets the table hold beside "a". MySQL/MariaDB: an ENUM or SET id's binary collation (see
   * `memberText`). Null: the column's own comparison is the proven one.
   */
  readonly idCollation?: string | null
  /**
   * Why the connecting role does not see every row (PostgreSQL row-level security whose policies apply to it), with
   * the fix; or null. Every SELECT leaves out what a policy hides, without a word: no walk of it is complete and no
   * id not found is proven absent.
   */
  readonly hiddenRows?: string | null
  /**
   * Why the database takes no write from the connector's connections (PostgreSQL: `transaction_read_only` on, by
   * `default_transaction_read_only` for the role or database, or a hot standby), with the fix; or null. Writes are
   * still sent (the database's own 25006 says the write was refused, whatever the catalogue read earlier), but
   * `warrant check` no longer says they can be made.
   */
  readonly noWrites?: string | null
}

/** The catalogue query for the id column of `table`, one row (none when the table or the column does not exist). */
export function tableFactsQuery(dialect: SqlDialectName, db: Kysely<any>, table: string, idField: string): CompiledQuery {
  const dot = table.indexOf('.')
  const schema = dot < 0 ? null : table.slice(0, dot)
  const name = dot < 0 ? table : table.slice(dot + 1)
  if (dialect === 'sqlite') {
    const s = schema ?? 'main'
    // an INTEGER PRIMARY KEY is the rowid (unique, never NULL) and has no index of its own in pragma_index_list
    return sql`select x.pk as id_pk, x."notnull" as id_notnull, upper(x.type) as id_type,
        (select count(*) from pragma_table_xinfo(${name}, ${s}) where pk > 0) as pk_columns,
        (select count(*) from pragma_index_list(${name}, ${s}) il where il."unique" = 1 and il.partial = 0
          and (select count(*) from pragma_index_info(il.name, ${s})) = 1
          and (select ii.name from pragma_index_info(il.name, ${s}) ii) = ${idField}) as unique_indexes,
        (select min(ix.coll) from pragma_index_list(${name}, ${s}) il join pragma_index_xinfo(il.name, ${s}) ix
          where il."unique" = 1 and il.partial = 0 and ix.key = 1 and ix.name = ${idField}
          and (select count(*) from pragma_index_info(il.name, ${s})) = 1) as unique_collation
      from pragma_table_xinfo(${name}, ${s}) x where x.name = ${idField}`.compile(db)
  }
  if (dialect === 'postgres') {
    const quoted = [schema, name].filter((p) => p !== null).map((p) => `"${p!.replace(/"/g, '""')}"`).join('.')
    // a table's inheritance children are read and written with it, and its keys do not cover their rows (a
    // partitioned table's do cover its partitions)
    return sql`select a.attnotnull as id_notnull, current_setting('transaction_read_only') = 'on' as read_only, pg_is_in_recovery() as in_recovery, row_security_active(a.attrelid) as row_security, (${viewRowSecurity(quoted)}) as row_security_through,
        exists (select 1 from pg_inherits h join pg_class k on k.oid = h.inhparent where h.inhparent = a.attrelid and k.relkind <> 'p') as inherited, format_type(a.atttypid, a.atttypmod) as id_type, t.typname as id_typname, a.atttypmod as id_typmod,
        (select b.typname from pg_type b where b.oid = coalesce(nullif(t.typbasetype, 0), t.oid)) as id_base_typname,
        (select b.typcategory = 'A' from pg_type b where b.oid = coalesce(nullif(t.typbasetype, 0), t.oid)) as id_array,
        exists (select 1 from pg_index i where i.indrelid = a.attrelid and i.indisunique and i.indisvalid and i.indpred is null
          and i.indexprs is null and i.indnkeyatts = 1 and i.indkey[0] = a.attnum) as unique_index,
        case when exists (select 1 from pg_index i where i.indrelid = a.attrelid and i.indisunique and i.indisvalid and i.indpred is null
            and i.indexprs is null and i.indnkeyatts = 1 and i.indkey[0] = a.attnum and i.indcollation[0] = a.attcollation) then null
          else (select quote_ident(n.nspname) || '.' || quote_ident(c.collname) from pg_index i
            join pg_collation c on c.oid = i.indcollation[0] join pg_namespace n on n.oid = c.collnamespace
            where i.indrelid = a.attrelid and i.indisunique and i.indisvalid and i.indpred is null
              and i.indexprs is null and i.indnkeyatts = 1 and i.indkey[0] = a.attnum order by c.collname limit 1) end as unique_collation
      from pg_attribute a join pg_type t on t.oid = a.atttypid
      where a.attrelid = to_regclass(${quoted}) and a.attname = ${idField} and not a.attisdropped`.compile(db)
  }
  // MariaDB only (/*M! … */): tx_read_only is this session's, on where every transaction it begins is READ ONLY
  // (init_connect, a proxy, SET SESSION TRANSACTION READ ONLY); MySQL 8 renamed it, so there it is not read
  return sql`select /*M! @@tx_read_only as read_only, */ c.is_nullable as id_nullable, c.data_type as id_type, c.datetime_precision as id_precision, c.character_set_name as id_charset, t.engine as engine, e.transactions as transactions,
      exists (select 1 from information_schema.statistics s where s.table_schema = c.table_schema and s.table_name = c.table_name
        and s.non_unique = 0 and s.column_name = c.column_name and s.seq_in_index = 1 and s.sub_part is null
        and not exists (select 1 from information_schema.statistics o where o.table_schema = s.table_schema and o.table_name = s.table_name
          and o.index_name = s.index_name and o.seq_in_index > 1)) as unique_index,
      (${viewTablesUnproven(schema, name)}) as view_unproven
    from information_schema.columns c
      join information_schema.tables t on t.table_schema = c.table_schema and t.table_name = c.table_name
      left join information_schema.engines e on e.engine = t.engine
    where c.table_schema = coalesce(${schema}, database()) and c.table_name = ${name} and c.column_name = ${idField}`.compile(db)
}

/**
 * MySQL/MariaDB: how many of the views a view reads, itself included (through views over views), read tables not
 * shown to keep transactions; 0 for a table. A view has no engine of its own, and the catalogue names no table it
 * reads (MariaDB has no VIEW_TABLE_USAGE): its definition, as the server keeps it, names each `schema`.`table` in
 * full, and a base table named there whose engine keeps no transactions (MyISAM, Aria, MEMORY) counts, as does a
 * definition the user may not read (empty without SHOW VIEW) or a nesting past 8 views. A name that is only text in
 * the definition counts as well: too many is safe, too few is not.
 */
function viewTablesUnproven(schema: string | null, name: string) {
  const namedIn = (s: string, t: string) => sql.raw(`locate(concat('\`', replace(${s}, '\`', '\`\`'), '\`.\`', replace(${t}, '\`', '\`\`'), '\`'), r.def) > 0`)
  return sql`with recursive reached (def, depth) as (
      select v.view_definition, 0 from information_schema.views v where v.table_schema = coalesce(${schema}, database()) and v.table_name = ${name}
      union all
      select v.view_definition, r.depth + 1 from reached r join information_schema.views v on ${namedIn('v.table_schema', 'v.table_name')} where r.depth < 8)
    select count(*) from reached r where coalesce(r.def, '') = '' or r.depth >= 8 or exists (
      select 1 from information_schema.tables b left join information_schema.engines e on e.engine = b.engine
      where b.table_type <> 'VIEW' and ${namedIn('b.table_schema', 'b.table_name')} and coalesce(e.transactions, 'NO') <> 'YES')`
}

/** The catalogue's row as facts; null when there is none (no such table or column: the read itself then says so). */
export function tableFactsOf(dialect: SqlDialectName, rows: readonly Row[], endpoint: string, idField: string): TableFacts | null {
  const row = rows[0]
  if (row === undefined) return null
  if (dialect === 'sqlite') {
    const soleKey = Number(row.id_pk) === 1 && Number(row.pk_columns) === 1
    // a non-INTEGER primary key of a rowid table takes NULLs (a legacy SQLite rule), and several of them
    const notNull = Number(row.id_notnull) === 1 || (soleKey && row.id_type === 'INTEGER')
    // the rowid (an INTEGER PRIMARY KEY) holds integers only; any other key is an index, whose collation is named
    // (min(): BINARY sorts before NOCASE and RTRIM, the finest comparison where several indexes prove it)
    const collation = row.unique_collation === null || row.unique_collation === undefined ? null : String(row.unique_collation)
    const named = collation !== null && /^[A-Za-z_][A-Za-z0-9_]*$/.test(collation)
    const rowid = soleKey && row.id_type === 'INTEGER'
    // a column of no type or BLOB keeps the integer 1, the real 1.0 and the text '1' as three keys its index tells
    // apart, all three shown as the id "1": its index proves no id names one row
    const oneFormPerId = sqliteKind(String(row.id_type ?? '')) !== 'untyped'
    return {
      // a collation no statement could name (an application's own) proves nothing a walk can use
      idUnique: rowid || (Number(row.unique_indexes) > 0 && named && oneFormPerId),
      idNullable: !notNull,
      transactional: true,
      writeRefusal: null,
      idRefusal: null,
      idCollation: rowid || !named ? null : collation,
    }
  }
  if (dialect === 'postgres') {
    const typname = String(row.id_typname ?? '')
    // timestamp(p): atttypmod is p, or -1 for the default of 6 digits
    const digits = typname === 'timestamptz' || typname === 'timestamp' ? (Number(row.id_typmod) < 0 ? 6 : Number(row.id_typmod)) : 0
    const base = String(row.id_base_typname ?? '')
    const idRefusal =
      base === 'bytea'
        ? bytesId(endpoint, idField, String(row.id_type), `encode(${idField}, 'hex')`)
        : row.id_array === true || PG_OBJECTS.has(base)
          ? objectId(endpoint, idField, String(row.id_type))
          : base === 'money'
            ? moneyId(endpoint, idField)
            : PG_UNORDERED.has(base)
              ? unorderedId(endpoint, idField, String(row.id_type))
              : subMillisecond(endpoint, idField, String(row.id_type), digits)
    const idCollation = row.unique_collation === null || row.unique_collation === undefined ? null : String(row.unique_collation)
    const through = row.row_security_through === null || row.row_security_through === undefined ? null : String(row.row_security_through)
    const hiddenRows = row.row_security === true ? rowSecurity(endpoint) : through !== null ? rowSecurityThrough(endpoint, through) : null
    const noWrites = row.read_only === true ? readOnly(endpoint, row.in_recovery === true) : null
    return { idUnique: row.unique_index === true && row.inherited !== true, idNullable: row.id_notnull !== true, transactional: true, writeRefusal: null, idRefusal, idCollation, hiddenRows, noWrites }
  }
  const type = String(row.id_type ?? '').toLowerCase()
  const digits = type === 'datetime' || type === 'timestamp' ? Number(row.id_precision ?? 0) : 0
  const engine = row.engine === null || row.engine === undefined ? null : String(row.engine)
  // a view has no engine of its own: transactional where every table it reads is shown to be (`viewTablesUnproven`)
  const transactional = engine === null ? Number(row.view_unproven ?? 1) === 0 : String(row.transactions ?? '').toUpperCase() === 'YES'
  const consequence = `an UPDATE is durable as soon as it runs and a ROLLBACK undoes nothing, so a write refused after it (two rows for one id, a version that did not move, a value the column keeps otherwise) or cut off before COMMIT could not be reported truthfully; no write is sent to it`
  return {
    idUnique: Number(row.unique_index) === 1,
    idNullable: String(row.id_nullable).toUpperCase() !== 'NO',
    transactional,
    writeRefusal: transactional
      ? null
      : engine === null
        ? `${endpoint} is a view over tables not all shown to keep transactions (a MyISAM, Aria or MEMORY table, or a definition the connecting user may not read: SHOW VIEW): if one does not, ${consequence}. Convert the tables it reads to InnoDB, grant SHOW VIEW on it, or point the resource at the table itself`
        : `${endpoint} is a ${engine} table, which keeps no transactions: ${consequence}. Convert the table to InnoDB (ALTER TABLE ... ENGINE=InnoDB)`,
    idRefusal: MYSQL_BYTES.has(type)
      ? bytesId(endpoint, idField, type, `hex(${idField})`)
      : MYSQL_OBJECTS.has(type)
        ? objectId(endpoint, idField, type)
        : type === 'float' ? floatId(endpoint, idField) : subMillisecond(endpoint, idField, type, digits),
    idCollation: memberText(type, row.id_charset),
    noWrites: Number(row.read_only ?? 0) === 1 ? mysqlReadOnly(endpoint) : null,
  }
}

/** Why no write reaches a MariaDB table from a session whose transactions are all READ ONLY, with the fix. */
function mysqlReadOnly(endpoint: string): string {
  return `${endpoint} takes no writes from Warrant's connection: the session is read-only (tx_read_only on: SET SESSION TRANSACTION READ ONLY, from the server's init_connect or a proxy in between), so every UPDATE is refused (error 1792) and nothing is written; make the connecting user's sessions read-write, or point the resource at a server that takes writes`
}

/**
 * An ENUM or SET id orders by its members' positions in the list ('b' before 'a' in enum('b', 'a')) but compares
 * with a string as text: a walk ordered by it and resumed at `id > 'b'` found no 'a'. Under its character set's
 * binary collation it orders as it compares, as text. Null for any other column.
 */
function memberText(type: string, charset: unknown): string | null {
  if (type !== 'enum' && type !== 'set') return null
  return typeof charset === 'string' && /^[a-z0-9]+$/i.test(charset) ? `${charset}_bin` : null
}

/** Why no write reaches a PostgreSQL database whose sessions are read-only, with the fix. */
function readOnly(endpoint: string, standby: boolean): string {
  const why = standby ? 'the server is a hot standby (in recovery)' : 'default_transaction_read_only is on for the role Warrant connects as or for the database'
  return `${endpoint} takes no writes from Warrant's connection: ${why}, so every UPDATE is refused (SQLSTATE 25006) and nothing is written; ${standby ? 'point the resource at the primary' : 'turn default_transaction_read_only off for the role or database, or point the resource at a server that takes writes'}`
}

/** Why a walk of a table under row-level security that binds the connecting role cannot be complete, with the fix. */
function rowSecurity(endpoint: string): string {
  return `${endpoint} has row-level security whose policies apply to the role Warrant connects as: every read leaves out the rows a policy hides, without a word, so no walk of it is complete and no id it does not find is proven absent; connect as a role the policies do not bind (the table's owner, without FORCE ROW LEVEL SECURITY, or one with BYPASSRLS), or disable row-level security on it`
}

/**
 * The first table a view reads (through views over views, to any depth) whose row-level security binds the role it
 * is read as, as `table|role`; NULL where none does. A view has no row security of its own (`row_security_active`
 * is false for it): it reads its tables as its owner, or as the reader where it is `security_invoker`
 * (PostgreSQL 15), and a policy binds that role unless it is a superuser, has BYPASSRLS, or owns the table
 * (by membership) without FORCE ROW LEVEL SECURITY. A materialized view holds what its owner read at refresh.
 */
function viewRowSecurity(quoted: string) {
  return sql`with recursive reached(relid, acting, depth) as (
      select to_regclass(${quoted})::oid, (select r.oid from pg_roles r where r.rolname = current_user), 0
      union all
      select d.refobjid, case when exists (select 1 from pg_options_to_table(v.reloptions) o
          where o.option_name = 'security_invoker' and lower(o.option_value) in ('true', 'on', 'yes', '1', 't', 'y')) then reached.acting else v.relowner end,
        reached.depth + 1
      from reached join pg_class v on v.oid = reached.relid and v.relkind in ('v', 'm')
        join pg_rewrite w on w.ev_class = v.oid
        join pg_depend d on d.classid = 'pg_rewrite'::regclass and d.objid = w.oid and d.refclassid = 'pg_class'::regclass and d.refobjid <> v.oid
      where reached.depth < 32)
    select t.oid::regclass::text || '|' || a.rolname from reached join pg_class t on t.oid = reached.relid join pg_roles a on a.oid = reached.acting
    where reached.depth > 0 and t.relrowsecurity and not a.rolsuper and not a.rolbypassrls
      and (t.relforcerowsecurity or not pg_has_role(a.oid, t.relowner, 'USAGE'))
    order by reached.depth limit 1`
}

/** Why a walk of a view over a table whose row-level security binds the role the view reads it as cannot be complete. */
function rowSecurityThrough(endpoint: string, through: string): string {
  const bar = through.lastIndexOf('|')
  const table = through.slice(0, bar)
  const role = through.slice(bar + 1)
  return `${endpoint} reads table ${table}, which has row-level security whose policies apply to role "${role}" (the view's owner, as whom a view reads its tables, or the role Warrant connects as, where the view is security_invoker): every read leaves out the rows a policy hides, without a word, so no walk of it is complete and no id it does not find is proven absent; have the view read as a role the policies do not bind (owned by the table's owner, without FORCE ROW LEVEL SECURITY, or by one with BYPASSRLS), or disable row-level security on ${table}`
}

/** PostgreSQL types (a domain's base type) the driver reads as an object, not as text or a number. */
const PG_OBJECTS = new Set(['interval', 'json', 'jsonb', 'point', 'circle'])

/**
 * An id column the driver reads as an object or an array (PostgreSQL interval, json/jsonb, point, circle, any array
 * type, or a domain over one): its id would be that value made text, "[object Object]" for every interval row, "1,2"
 * for both {1,2} and {"1,2"}, one id for several rows, which no read or write finds again, and a position no page
 * resumes from. Refused, as a bytes id is.
 */
function objectId(endpoint: string, idField: string, type: string): string {
  return `id column "${idField}" of ${endpoint} is ${type}, which the driver reads as an object or an array, not as text: its ids would not be the values the table holds (every interval or json row shown as "[object Object]", several rows under one id) and no read, write or walk could find its row again, so no record of it is read or written; choose another id column, or key the table by text (a generated column holding ${idField}::text under a unique index)`
}

/**
 * MySQL/MariaDB types no id can be: JSON (MySQL's own type, which the server sends re-spelled in its normal form and
 * compares as JSON, not as the text a read by id gives; MariaDB's JSON is LONGTEXT, read and compared as its stored
 * text, `jsonStrings`) and every geometry type, which the driver reads as an object.
 */
const MYSQL_OBJECTS = new Set(['json', 'geometry', 'point', 'linestring', 'polygon', 'multipoint', 'multilinestring', 'multipolygon', 'geometrycollection', 'geomcollection'])

/**
 * A PostgreSQL money id is read as the server's lc_monetary text ("$1.50"): no read or write by that text finds its
 * row (the id is refused as no value of a numeric column), and the text changes with the session's lc_monetary.
 */
function moneyId(endpoint: string, idField: string): string {
  return `id column "${idField}" of ${endpoint} is money, which is read as text in the server's lc_monetary format ("$1.50"), not as a number: no read or write by the id a record shows could find its row, and the shown id changes with lc_monetary, so no record of it is read or written; choose another id column, or declare it numeric`
}

/**
 * PostgreSQL types (a domain's base type) read as text but with no ordering a walk can page by (no default btree
 * operator class): box, lseg, path and polygon compare by area or length (two boxes of one area are "equal"), line
 * and xml not at all (xml has no `=`), jsonpath neither. Every walk failed ("could not identify an ordering
 * operator"), answered as the source failing, and a read by id found another row of the same area or failed.
 */
const PG_UNORDERED = new Set(['box', 'line', 'lseg', 'path', 'polygon', 'xml', 'jsonpath'])

function unorderedId(endpoint: string, idField: string, type: string): string {
  return `id column "${idField}" of ${endpoint} is ${type}, which PostgreSQL cannot order nor compare for equality by value (no btree operator class), so no walk could page by it and no read or write by id could find exactly its row; no record of it is read or written; choose an id column of text, a number, a uuid or a timestamp, or key the table by text (a generated column holding ${idField}::text under a unique index)`
}

// BIT(n) too: the driver reads it as a Buffer of its bytes
const MYSQL_BYTES = new Set(['binary', 'varbinary', 'tinyblob', 'blob', 'mediumblob', 'longblob', 'bit'])

/**
 * An id column of bytes (MySQL/MariaDB BINARY, VARBINARY, BLOB, BIT; PostgreSQL bytea or a domain over it) is read as a
 * Buffer: an id would be the bytes decoded as UTF-8 (0xFFFF and 0xFEFF both "\uFFFD\uFFFD", one key for two rows,
 * neither found by it again) and a walk's position a Buffer no page can resume from. Refused rather than keyed on
 * a hex form, which would not be the id the table shows. (SQLite keeps bytes per value, not per column: the
 * walk counts such rows, see read-session.ts.) `hex`: the engine's expression for the column as hex text.
 */
function bytesId(endpoint: string, idField: string, type: string, hex: string): string {
  return `id column "${idField}" of ${endpoint} is ${type}, which holds bytes, not text: its ids would be read as UTF-8 text (bytes that are none would lose their value, two rows could share one id) and no walk could resume from them, so no record of it is read or written; choose another id column, or key the table by text (a text column, or a generated column holding ${hex} under a unique index)`
}

/**
 * A MySQL/MariaDB FLOAT id keeps a single-precision value, which the driver reads as the server's 6-digit
 * rendering ("0.1") and the server compares with any parameter as a double (0.100000001…): no id a record shows
 * finds its row again, and every read by it would say missing. Refused, as a bytes id is. (A DOUBLE round-trips.)
 */
function floatId(endpoint: string, idField: string): string {
  return `id column "${idField}" of ${endpoint} is FLOAT, which keeps single-precision values that are read rounded to 6 digits ("0.1") and compared as doubles (0.100000001…): no id a record shows would find its row again, so no record of it is read or written; choose another id column, or declare it DOUBLE or DECIMAL`
}

/** The facts as what the connector refuses or checks, each with the fix (`warrant check` reports them). */
export function tableProblemsOf(facts: TableFacts, endpoint: string, idField: string): TableProblem[] {
  const problems: TableProblem[] = []
  if (facts.writeRefusal !== null) problems.push({ affects: 'writes', message: facts.writeRefusal, configKeys: [] })
  if (facts.noWrites) problems.push({ affects: 'writes', message: facts.noWrites, configKeys: [] })
  if (facts.idRefusal !== null) problems.push({ affects: 'reads', message: facts.idRefusal, configKeys: ['id_field'] })
  // with reads refused, what a walk would check is moot
  else if (!facts.idUnique)
    problems.push({
      affects: 'walks',
      message: `id column "${idField}" of ${endpoint} is not proven unique: it is neither the table's only primary key column nor alone under a unique index (a view, a table without a key, a key over several columns, a PostgreSQL table with inheritance children, a SQLite column of no type or BLOB, whose key keeps the integer 1 and the text '1' apart though both are shown as "1"), so every page of a walk is checked for an id that comes twice (one more count per page) and the walk is refused, naming the id, where one does; make "${idField}" the primary key, or give it a unique index of its own, to prove it`,
      configKeys: [],
    })
  return problems
}

/**
 * A timestamp id with more than 3 fractional digits is read into JavaScript as a Date, to the millisecond: two
 * rows 100 µs apart would share one id, and a read by that id would find neither. Refused rather than keyed on
 * a text form, which would change the id of every record of an existing millisecond column.
 */
function subMillisecond(endpoint: string, idField: string, declared: string, digits: number): string | null {
  if (digits <= 3) return null
  return `id column "${idField}" of ${endpoint} is ${declared}, which keeps ${digits} fractional digits of a second, but its ids are read to the millisecond: rows less than a millisecond apart would share one id and a read by that id would find neither, so no record of it is read or written; declare the column with at most millisecond precision (timestamp(3)), or choose another id column`
}
