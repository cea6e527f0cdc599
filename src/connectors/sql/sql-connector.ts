import { configKeyRefusal, readSecret } from '../../config/index.js'
import { WarrantError } from '../../contract/index.js'
import type { WriteOutcome, WriteRequest } from '../connector.js'
import type { Backend } from './backend.js'
import { CATALOGUE_MAX_AGE_MS, catalogueFactsOf } from './catalogue-facts.js'
import { columnFactsOf, columnTypesOf, columnTypesQuery, type ColumnFacts } from './column-types.js'
import { callEmitter, type ConnectorContext } from './context.js'
import { catalogueReader } from './catalogue-reader.js'
import type { SqlConnector, SqlConnectorOptions } from './options.js'
import { mysqlBackend } from './mysql-backend.js'
import { postgresBackend } from './postgres-backend.js'
import { readByIds } from './read-by-ids.js'
import { ownedRowReader, sourceRecordReader } from './record.js'
import { openReadSession, type OpenSessions } from './read-session.js'
import { resolveSqlResource } from './resource.js'
import { sqliteBackend } from './sqlite-backend.js'
import { tableFactsOf, tableFactsQuery, tableProblemsOf, type TableFacts } from './table-facts.js'
import { parseSqlUrl, type SqlLocation } from './url.js'
import { updateEffectsOf, updateTriggersQuery } from './update-triggers.js'
import { writeRecord } from './write.js'
import { writeWindow } from './write-window.js'

export type { SqlConnector, SqlConnectorOptions } from './options.js'

/**
 * A connector to one table of SQLite, PostgreSQL, MySQL or MariaDB.
 *
 * Reads walk in keyset order on the id column, inside one read transaction per session, so a whole walk sees
 * one snapshot (`consistentSnapshot: true`). Writes are one conditional `UPDATE … WHERE id AND version AND
 * precondition RETURNING …` (MySQL: the UPDATE and a read of the row in one transaction). Every value is a parameter; identifiers come from the validated config and are
 * quoted by kysely. Nothing is connected until first use, so an unreachable upstream is a result, not a crash.
 *
 * What the catalogue says of the table (column types, UPDATE triggers, keys, engine) is read again for each read
 * session, at each operation's run start (`refreshFacts`), and for writes once older than `catalogueMaxAgeMs`
 * (default 5 s): a migration run while Warrant serves is seen by the next walk and run, and by a running one's
 * writes within that age (see catalogue-facts.ts).
 *
 * @example
 * const connector = createSqlConnector({ resource: config.resources.subscriptions, onCall: audit.recordCall })
 * const session = await connector.openSession()
 * const page = await session.readPage({ source: connector.source, filter: { status: 'past_due' }, position: null, pageSize: 100 })
 *
 * @throws WarrantError('invalid_request') for a resource that is not a usable sql resource.
 */
export function createSqlConnector(options: SqlConnectorOptions): SqlConnector {
  const resource = resolveSqlResource(options.resource)
  const { config, idField } = resource
  const password = options.password ?? (config.password ? readSecret(config.password, options.env ?? process.env, 'connector.password') : undefined)
  const location = sqlLocation(config.url, password)
  const table = config.table
  const source = config.source
  const endpoint = `table ${table}`
  // the resource's `connector.statement_timeout_ms`, unless the caller named one; unset, each backend's own default
  const statementTimeoutMs = options.statementTimeoutMs ?? config.statement_timeout_ms
  const limited: SqlConnectorOptions = statementTimeoutMs === undefined ? options : { ...options, statementTimeoutMs }
  const backend: Backend =
    location.dialect === 'sqlite'
      ? sqliteBackend(location, table, idField, limited)
      : location.dialect === 'postgres'
        ? postgresBackend(location, limited)
        : mysqlBackend(location, limited)
  const sessions: OpenSessions = new Set()
  let closing: Promise<void> | undefined

  // A catalogue statement reaches the upstream like any other, so each is a call, named by what it reads
  const readCatalogue = catalogueReader(backend, options.onCall, source, endpoint)
  // one after the other: on the shared connection, where a session's first page waits for them
  const readColumnFacts = async (): Promise<ColumnFacts | null> => {
    const rows = await readCatalogue('columns', columnTypesQuery(location.dialect, backend.db, table))
    if (rows.length === 0) return null
    const triggers = await readCatalogue('update triggers', updateTriggersQuery(location.dialect, backend.db, table))
    return columnFactsOf({ ...resource, table }, columnTypesOf(location.dialect, rows), location.dialect, updateEffectsOf(triggers, resource.fields))
  }
  const readTableFacts = async (): Promise<TableFacts | null> =>
    tableFactsOf(location.dialect, await readCatalogue('table facts', tableFactsQuery(location.dialect, backend.db, table, idField)), endpoint, idField)
  // facts that could not be read are null (the upstream may be down): each reader says what that means
  const catalogue = catalogueFactsOf(async () => {
    let failed = false
    const unread = () => ((failed = true), null)
    const [columns, tableFacts] = await Promise.all([readColumnFacts().catch(unread), readTableFacts().catch(unread)])
    return { facts: { columns, table: tableFacts }, failed }
  }, options.catalogueMaxAgeMs ?? CATALOGUE_MAX_AGE_MS)

  const ctx: ConnectorContext = {
    ...resource,
    dialect: location.dialect,
    location,
    table,
    source,
    columns: Object.keys(resource.fields),
    endpoint,
    backend,
    idleTimeoutMs: options.sessionIdleTimeoutMs ?? 5 * 60_000,
    clock: options.now ?? (() => new Date()),
    isClosing: () => closing !== undefined,
    emit: callEmitter(options.onCall, source, endpoint),
    recordOf: sourceRecordReader(resource.fields, idField, resource.versionField),
    pageRecordOf: ownedRowReader(resource.fields, idField, resource.versionField),
    catalogue,
  }

  return {
    kind: 'sql',
    dialect: location.dialect,
    source,
    sources: [source],
    ordering: `${idField} ascending`,

    openSession: () => openReadSession(ctx, sessions),

    readByIds: (ids, signal) => readByIds(ctx, ids, signal),
    refreshFacts: async () => void (await catalogue.fresh()),
    fieldTypeMisfits: async () => (await catalogue.fresh()).columns?.misfits ?? null,
    stringColumns: async () => (await catalogue.fresh()).columns?.stringColumns ?? null,
    numberColumns: async () => (await catalogue.fresh()).columns?.numberColumns ?? null,
    versionColumnProblem: async () => (await catalogue.fresh()).columns?.versionProblem ?? null,
    fieldsMovedOnUpdate: async () => (await catalogue.fresh()).columns?.movedOnUpdate ?? null,
    versionSecondDigits: async () => (await catalogue.fresh()).columns?.versionColumn?.secondDigits ?? null,
    tableProblems: async () => {
      const facts = (await catalogue.fresh()).table
      return facts === null ? null : tableProblemsOf(facts, endpoint, idField)
    },
    // every write is one UPDATE … WHERE id AND version AND precondition (see write.ts)
    writeEnforcesVersion: true,

    write: async (request: WriteRequest): Promise<WriteOutcome> => {
      await refuseUnsafeWrites(ctx)
      return writeRecord(ctx, request)
    },
    // one UPDATE … RETURNING for a window of targets; MySQL has no RETURNING on UPDATE, so it writes one at a time
    ...(location.dialect === 'mysql'
      ? {}
      : {
          writeWindow: async (requests: readonly WriteRequest[]) => {
            await refuseUnsafeWrites(ctx)
            return writeWindow(ctx, requests)
          },
          ...(config.write_window === undefined ? {} : { writeWindowSize: config.write_window }),
        }),

    close() {
      return (closing ??= (async () => {
        await Promise.all([...sessions].map((s) => s.expire()))
        await backend.destroy()
      })())
    },
  }
}

/**
 * A write the catalogue says could not be reported truthfully is refused before anything is sent: a table that
 * keeps no transactions (a refused or cut-off write there stays written), an id column that cannot name its
 * rows. Facts that could not be read do not stop the write (the statement itself then fails, saying why).
 *
 * @throws WarrantError('invalid_request') naming the table, why, and the fix.
 */
async function refuseUnsafeWrites(ctx: ConnectorContext): Promise<void> {
  // read within the max age: a table converted to MyISAM since is seen within it
  const facts = (await ctx.catalogue.recent()).table
  const refusal = facts?.writeRefusal ?? facts?.idRefusal ?? null
  if (refusal !== null) throw new WarrantError('invalid_request', refusal)
}

/** The upstream's location; a URL it cannot use is refused naming its key (`connector.url`). */
function sqlLocation(url: string, password: string | undefined): SqlLocation {
  try {
    return parseSqlUrl(url, password)
  } catch (error) {
    if (error instanceof WarrantError && error.code === 'invalid_request') throw configKeyRefusal('connector.url', error.message)
    throw error
  }
}
