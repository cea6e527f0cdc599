import { Kysely, PostgresDialect } from 'kysely'
import pg from 'pg'
import type { SqlConnectorOptions } from './options.js'
import type { SqlLocation } from './url.js'
import type { Backend, Row } from './backend.js'
import { NotCommittedError, NotConnectedError } from './errors.js'
import { updateAndReread } from './reread-update.js'
import { DATE, TIMESTAMP, TIMESTAMPTZ, utcInstantText, utcWallClock } from './utc-instant-text.js'

/** PostgreSQL's type oid of inet, also sent for a domain over it. */
const INET = 869

/**
 * An inet value as `cast(… as text)` gives it, by which a string filter and a write's exact id compare it: with its
 * mask. PostgreSQL outputs a host's address without it ('10.0.0.1' for 10.0.0.1/32): shown so, a record's id
 * matched no filter on it (answered complete, empty) and no write to it.
 */
function inetText(value: string): string {
  return value.includes('/') ? value : `${value}/${value.includes(':') ? 128 : 32}`
}

/** PostgreSQL's type oid of `character(n)` (bpchar), also sent for a domain over it. */
const BPCHAR = 1042

/**
 * A `character(n)` value as PostgreSQL itself reads it as text: without the padding (`cast(… as text)` drops
 * trailing spaces, `=` ignores them, and so does MySQL's CHAR on read). Shown padded, a record would hold a value
 * its own filter (`{status: "active"}`) compares otherwise, and a write of "active" would read back as
 * "active    ", which it did not write.
 */
function typeParserOf(oid: number, format?: string): (value: string) => unknown {
  if (oid === BPCHAR && format !== 'binary') return (value) => value.replace(/ +$/, '')
  if (oid === INET && format !== 'binary') return inetText
  const parser = pg.types.getTypeParser(oid, format as 'text')
  // a timestamptz is read as the ISO text its record shows, not as a Date turned back into it (`utcInstantText`)
  if (oid === TIMESTAMPTZ && format !== 'binary') return (value) => utcInstantText(value, parser)
  // a timestamp or date names no zone: read as UTC, as the SQL compares a filter's instant with it (`utcWallClock`)
  if ((oid === TIMESTAMP || oid === DATE) && format !== 'binary') return (value) => utcWallClock(value, parser)
  return parser
}

export function postgresBackend(location: Extract<SqlLocation, { dialect: 'postgres' }>, options: SqlConnectorOptions): Backend {
  const common = {
    connectionString: location.connectionString,
    statement_timeout: options.statementTimeoutMs ?? 30_000,
    connectionTimeoutMillis: 10_000,
    application_name: 'warrant',
    types: { getTypeParser: typeParserOf },
  }
  const pool = new pg.Pool({ ...common, max: options.maxConnections ?? 5 })
  const sessionPool = new pg.Pool({ ...common, max: options.maxSessions ?? 10, idleTimeoutMillis: 10_000 })
  // An idle connection whose server goes away emits 'error' on its pool; unhandled, that would end the process.
  pool.on('error', () => undefined)
  sessionPool.on('error', () => undefined)
  const db = new Kysely<any>({ dialect: new PostgresDialect({ pool }) })
  return {
    db,
    run: async (query) => (await db.executeQuery<Row>(query)).rows as Row[],
    // RETURNING answers in the same statement, autocommitted (one round trip); where a trigger may change the
    // row after it, the UPDATE and its rows read again are one transaction on one client, and where a generated
    // column may move outside the set, the UPDATE and its judgement (BEGIN, UPDATE, COMMIT or ROLLBACK)
    update: async (statement) => {
      // the client is taken first, on its own: a connection that cannot be opened has carried no statement
      let client: pg.PoolClient
      try {
        client = await pool.connect()
      } catch (error) {
        throw new NotConnectedError(error)
      }
      let failure: Error | undefined
      // a checked-out client has no listener of the pool's: a connection dropped under the write (a socket closed
      // without the server's own error) emits 'error' on it, which unheard would end the process. The statement
      // in flight fails with it anyway, which says what happened
      const onError = (error: Error) => void (failure ??= error)
      client.on('error', onError)
      try {
        if (statement.returningIsFinal && !statement.judgedBeforeCommit) return (await client.query(statement.returning.sql, statement.returning.parameters as unknown[])).rows as Row[]
        return await updateAndReread(
          { run: async (query) => (typeof query === 'string' ? await client.query(query) : await client.query(query.sql, query.parameters as unknown[])).rows as Row[] },
          'BEGIN',
          statement,
        )
      } catch (error) {
        // a refusal left the connection as it was; after any other failure it is not trusted again
        if (!(error instanceof NotCommittedError && error.cause === undefined)) failure = error instanceof Error ? error : new Error(String(error))
        throw error
      } finally {
        client.removeListener('error', onError)
        client.release(failure)
      }
    },
    openHandle: async () => {
      const client = await sessionPool.connect()
      let broken: Error | undefined
      // A checked-out client has no listener of the pool's; without one, a dropped connection would crash.
      const onError = (error: Error) => {
        broken ??= error
      }
      client.on('error', onError)
      const release = () => {
        client.removeListener('error', onError)
        client.release(broken ?? undefined)
      }
      try {
        await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY')
        // The first statement of a REPEATABLE READ transaction takes its snapshot: now, not at the first page.
        const result = await client.query<{ snapshot: string }>('SELECT pg_current_snapshot()::text AS snapshot')
        const guarded = async (text: string, parameters?: readonly unknown[]): Promise<Row[]> => {
          if (broken) throw broken
          try {
            return (await client.query(text, parameters as unknown[] | undefined)).rows as Row[]
          } catch (error) {
            broken ??= error instanceof Error ? error : new Error(String(error))
            throw error
          }
        }
        let cursors = 0
        return {
          snapshot: `postgres:${result.rows[0]?.snapshot ?? ''}`,
          run: (query) => guarded(query.sql, query.parameters),
          // a cursor in the REPEATABLE READ transaction: same snapshot as every other read of the session
          stream: async (query) => {
            const name = `warrant_walk_${++cursors}`
            await guarded(`DECLARE ${name} NO SCROLL CURSOR FOR ${query.sql}`, query.parameters)
            let open = true
            return {
              fetch: (count) => {
                if (!Number.isSafeInteger(count) || count < 1) throw new RangeError(`fetch count must be a positive integer, got ${count}`)
                return guarded(`FETCH FORWARD ${count} FROM ${name}`)
              },
              close: async () => {
                if (!open || broken) return
                open = false
                await guarded(`CLOSE ${name}`)
              },
            }
          },
          close: async () => {
            try {
              if (!broken) await client.query('COMMIT')
            } catch (error) {
              broken ??= error instanceof Error ? error : new Error(String(error))
            } finally {
              release()
            }
          },
        }
      } catch (error) {
        broken ??= error instanceof Error ? error : new Error(String(error))
        release()
        throw error
      }
    },
    destroy: async () => {
      await Promise.all([db.destroy(), sessionPool.end()])
    },
  }
}
