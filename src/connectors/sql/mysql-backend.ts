import { Kysely, MysqlDialect, type CompiledQuery } from 'kysely'
import mysql, { type Pool, type PoolOptions, type ResultSetHeader } from 'mysql2'
import type { PoolConnection as PromiseConnection } from 'mysql2/promise'
import { CommitFailedError, messageOf, NotCommittedError, NotConnectedError } from './errors.js'
import { mysqlTypeCast } from './mysql-dates.js'
import type { SqlConnectorOptions } from './options.js'
import type { SqlLocation } from './url.js'
import type { Backend, Row } from './backend.js'

type MysqlLocation = Extract<SqlLocation, { dialect: 'mysql' }>

/**
 * mysql2's TLS for an `ssl-mode`. With `ssl` set, mysql2 refuses a server that offers no TLS rather than fall back.
 * It checks the certificate against Node's CAs (and NODE_EXTRA_CA_CERTS) unless rejectUnauthorized is false, and
 * the host name only with verifyIdentity.
 */
function sslOptionsOf(mode: MysqlLocation['sslMode']): Pick<PoolOptions, 'ssl'> {
  if (mode === 'DISABLED') return {}
  if (mode === 'REQUIRED') return { ssl: { rejectUnauthorized: false } }
  return { ssl: { rejectUnauthorized: true, verifyIdentity: mode === 'VERIFY_IDENTITY' } }
}

/**
 * MySQL and MariaDB over mysql2. UPDATE has no RETURNING there, so a write is a transaction: the UPDATE, the
 * row read back (our own row lock keeps it as written), then COMMIT. Until COMMIT is sent nothing is
 * durable, which lets a write that failed or was refused say "nothing was written" with certainty: refused by
 * `accept`, rolled back (the connection lost after the UPDATE was sent), or not sent (START TRANSACTION failed).
 */
export function mysqlBackend(location: MysqlLocation, options: SqlConnectorOptions): Backend {
  const timeoutMs = options.statementTimeoutMs ?? 30_000
  const common: PoolOptions = {
    host: location.host,
    port: location.port,
    user: location.user,
    ...(location.password === undefined ? {} : { password: location.password }),
    database: location.database,
    ...sslOptionsOf(location.sslMode),
    connectTimeout: 10_000,
    charset: 'utf8mb4',
    // DATETIME values are read and written as UTC instants; TIMESTAMP columns follow the session time zone below
    timezone: 'Z',
    // dates that name no day (MariaDB's '0000-00-00') are shown as stored, never as another day
    typeCast: mysqlTypeCast,
    supportBigNumbers: true,
    // JSON values as the server sends them: MariaDB's JSON is LONGTEXT and compares its stored text, which mysql2
    // would parse and re-spell ('{"a":  1}' shown as '{"a":1}'), a value an eq on it finds in no row
    jsonStrings: true,
    // Affected rows are the rows the WHERE matched, not only those whose values changed: a write that sets a
    // field to the value it already had still matched id, version and precondition. (mysql2's default too;
    // said here because the write's outcome depends on it.)
    flags: ['FOUND_ROWS'],
    waitForConnections: true,
    queueLimit: 0,
  }
  const pool = prepare(mysql.createPool({ ...common, connectionLimit: options.maxConnections ?? 5 }), timeoutMs)
  const sessionPool = prepare(mysql.createPool({ ...common, connectionLimit: options.maxSessions ?? 10, idleTimeout: 10_000, maxIdle: 0 }), timeoutMs)
  const writes = pool.promise()
  const sessions = sessionPool.promise()
  const db = new Kysely<any>({ dialect: new MysqlDialect({ pool }) })
  const query = async (conn: PromiseConnection, statement: CompiledQuery | string) =>
    typeof statement === 'string' ? (await conn.query(statement))[0] : (await conn.query(statement.sql, statement.parameters as unknown[]))[0]

  return {
    db,
    run: async (statement) => (await db.executeQuery<Row>(statement)).rows as Row[],
    update: async ({ plain, readBack, accept }) => {
      let conn: PromiseConnection
      try {
        conn = await writes.getConnection()
      } catch (error) {
        // a new connection's handshake failed, or none was free in time: no statement was sent on it
        throw new NotConnectedError(error)
      }
      let committing = false
      let healthy = true
      try {
        try {
          await query(conn, 'START TRANSACTION')
        } catch (error) {
          // a pooled connection the server has ended since: the UPDATE was never sent
          throw new NotCommittedError(messageOf(error), error, false)
        }
        const header = (await query(conn, plain)) as ResultSetHeader
        if (header.affectedRows === 0) {
          await query(conn, 'ROLLBACK')
          return []
        }
        const rows = (await query(conn, readBack)) as Row[]
        const refusal = accept(rows)
        if (refusal !== undefined) {
          await query(conn, 'ROLLBACK')
          throw new NotCommittedError(refusal)
        }
        committing = true
        await query(conn, 'COMMIT')
        return rows
      } catch (error) {
        if (error instanceof NotCommittedError && error.cause === undefined) throw error
        healthy = false
        if (error instanceof NotCommittedError) throw error
        // a failed COMMIT may have been applied, whatever the server (or a proxy before it) answered; anything
        // before it was not (the server rolls back an uncommitted transaction whose connection is gone)
        if (committing) throw new CommitFailedError(error)
        await query(conn, 'ROLLBACK').catch(() => undefined)
        throw new NotCommittedError(messageOf(error), error)
      } finally {
        if (healthy) conn.release()
        else conn.destroy()
      }
    },
    openHandle: async () => {
      const conn = await sessions.getConnection()
      let broken: unknown
      const fail = (error: unknown) => {
        broken ??= error
        return error
      }
      const release = () => (broken === undefined ? conn.release() : conn.destroy())
      try {
        await query(conn, 'SET TRANSACTION ISOLATION LEVEL REPEATABLE READ')
        // WITH CONSISTENT SNAPSHOT takes the snapshot now, not at the first page's SELECT
        await query(conn, 'START TRANSACTION WITH CONSISTENT SNAPSHOT, READ ONLY')
        const [row] = (await query(conn, 'SELECT CAST(UTC_TIMESTAMP(6) AS CHAR) AS at, CONNECTION_ID() AS connection_id')) as Row[]
        return {
          snapshot: `mysql:${String(row?.at ?? '').replace(' ', 'T')}Z;connection=${String(row?.connection_id ?? '')}`,
          run: async (statement) => {
            if (broken !== undefined) throw broken
            try {
              return (await query(conn, statement)) as Row[]
            } catch (error) {
              throw fail(error)
            }
          },
          close: async () => {
            try {
              if (broken === undefined) await query(conn, 'COMMIT')
            } catch (error) {
              fail(error)
            } finally {
              release()
            }
          },
        }
      } catch (error) {
        fail(error)
        release()
        throw error
      }
    },
    destroy: async () => {
      // the pools are ended here rather than by db.destroy(): kysely ends only a pool it has started using
      await Promise.all([endPool(pool), endPool(sessionPool)])
    },
  }
}

/**
 * The connector's sessions' sql_mode: the server's, with STRICT_ALL_TABLES added (see `prepare`), and without the
 * flags under which a parameter would not be the value sent. mysql2 writes every parameter into the statement's text,
 * a quote escaped with a backslash: under NO_BACKSLASH_ESCAPES `'\' or 1=1 -- '` is the string '\' and the rest
 * SQL (an UPDATE for one id wrote every row). Under EMPTY_STRING_IS_NULL (and ORACLE) '' is a NULL no row equals.
 */
export const SESSION_SQL_MODE = `SET SESSION sql_mode = TRIM(BOTH ',' FROM ${['NO_BACKSLASH_ESCAPES', 'EMPTY_STRING_IS_NULL', 'ORACLE'].reduce(
  (mode, flag) => `REPLACE(${mode}, ',${flag},', ',')`,
  "CONCAT(',', @@SESSION.sql_mode, ',STRICT_ALL_TABLES,')",
)})`

/**
 * Every new connection: utf8mb4, autocommit and no row limit whatever the server's defaults, UTC for TIMESTAMP columns,
 * statement and lock-wait limits (MariaDB's max_statement_time in seconds, else MySQL's max_execution_time in ms,
 * which covers SELECT only), and a strict sql_mode: without
 * STRICT a value a column cannot hold is kept as another (text in an INT as its leading digits, a value too long
 * cut, a zero date) with only a warning. STRICT_ALL_TABLES is added to the session's own mode, the server's other
 * flags kept but those that would change what a parameter says (`SESSION_SQL_MODE`); only this session's, never the
 * global one (the server is shared). mysql2 runs a connection's commands in order, so these run before any
 * statement of ours.
 */
function prepare(pool: Pool, timeoutMs: number): Pool {
  const seconds = Math.max(1, Math.ceil(timeoutMs / 1000))
  pool.on('connection', (conn) => {
    // an idle connection whose server goes away emits 'error'; unhandled, that would end the process
    conn.on('error', () => undefined)
    // Fail closed: a connection these could not set up reads under the server's own settings (parameters as SQL
    // under NO_BACKSLASH_ESCAPES, '😀' as '?', TIMESTAMPs in another zone), so it is destroyed, never used: the
    // statements queued on it fail, and each read or write says it failed.
    const required = (error: unknown) => {
      if (error) conn.destroy()
    }
    // the handshake asked utf8mb4; a server's init_connect (SET NAMES latin1) would have '😀' read back as '?'
    conn.query('SET NAMES utf8mb4', required)
    conn.query("SET time_zone = '+00:00'", required)
    conn.query(SESSION_SQL_MODE, required)
    // a server's defaults could make a read say less than the table holds: with autocommit off, a pooled
    // connection's first SELECT opened a snapshot nobody committed, which every later read on it saw (a row
    // inserted since "missing"); a sql_select_limit cut every statement without a LIMIT (reads by id) short
    conn.query('SET SESSION autocommit = 1, sql_select_limit = 18446744073709551615', required)
    conn.query(`SET SESSION innodb_lock_wait_timeout = ${seconds}`, () => undefined)
    conn.query(`SET SESSION max_statement_time = ${seconds}`, (error) => {
      if (error) conn.query(`SET SESSION max_execution_time = ${seconds * 1000}`, () => undefined)
    })
  })
  return pool
}

function endPool(pool: Pool): Promise<void> {
  return new Promise((resolve) => pool.end(() => resolve()))
}
