import type { ReadPageResult, WriteOutcome } from '../connector.js'

/**
 * What a failed statement means for a write: definitely not applied (rejected), never sent (not_sent: no
 * connection to send it on, or a transaction that could not begin), sent and never committed (rolled_back: the
 * connection was lost before COMMIT), not applied but worth another try (rate_limited: a deadlock or a lock wait
 * the database rolled back), or unknown.
 */
export type WriteFailure = Extract<
  WriteOutcome,
  { kind: 'rejected' } | { kind: 'not_sent' } | { kind: 'rolled_back' } | { kind: 'unauthorized' } | { kind: 'rate_limited' } | { kind: 'unknown' }
>

/** Seconds before a write the database rolled back for a lock is tried again. */
const LOCK_RETRY_SECONDS = 1

/**
 * A write whose transaction was never committed (MySQL/MariaDB, where UPDATE and its read-back are one
 * transaction, and a RETURNING engine's UPDATE read again): whatever went wrong, nothing was written. `cause` is
 * the database's error, when there was one. `updateSent` false: the transaction failed to begin, so the UPDATE
 * itself was never sent.
 */
export class NotCommittedError extends Error {
  override readonly name = 'NotCommittedError'
  constructor(
    message: string,
    cause?: unknown,
    readonly updateSent = true,
  ) {
    super(message, cause === undefined ? undefined : { cause })
  }
}

/**
 * A read session whose snapshot is of a database no longer at its location (a SQLite file removed or replaced
 * since the session opened it): its walk cannot go on, nor be resumed over the same snapshot.
 */
export class SnapshotGoneError extends Error {
  override readonly name = 'SnapshotGoneError'
}

/**
 * The connection a write would go over could not be opened (refused, a host that does not resolve, a database
 * that does not exist, a connect timeout, a SQLite file that cannot be opened): not one statement was sent.
 * Thrown by a backend only where it opens or takes a connection, so the step it failed at, not an error code,
 * proves nothing was sent: a code such as EHOSTUNREACH can also end a connection a statement was already on.
 */
export class NotConnectedError extends Error {
  override readonly name = 'NotConnectedError'
  constructor(cause: unknown) {
    super(messageOf(cause), { cause })
  }
}

/**
 * A COMMIT that failed, after the UPDATE and its read-back went through: classified by the engine's own error, except
 * where that error proves only a statement's rollback (`statementRefusal`), which at COMMIT stays unknown, and any
 * MySQL/MariaDB error, which at COMMIT proves nothing (unknown).
 */
export class CommitFailedError extends Error {
  override readonly name = 'CommitFailedError'
  constructor(cause: unknown) {
    super(messageOf(cause), { cause })
  }
}

/**
 * PostgreSQL ERRORs that end the UPDATE before it completed, its transaction aborted (an ERROR never follows a
 * commit record: PostgreSQL holds interrupts from before it): nothing was written, though the statement was sent.
 * 57014, cancelled: a statement_timeout (the connector's statement_timeout_ms, or the role's or database's), most
 * often spent waiting on a row lock another session holds, or a cancel request. 25006, read-only: the session takes
 * no writes (default_transaction_read_only for the role or database, a hot standby); every write fares the same,
 * so it halts as a refused credential does. Said only of the UPDATE's own answer: at COMMIT see CommitFailedError.
 */
function statementRefusal(code: string, message: string): WriteFailure | undefined {
  if (code === '57014')
    return {
      kind: 'rolled_back',
      message: `${message} (SQLSTATE 57014: PostgreSQL cancelled the UPDATE before it completed and rolled its transaction back, so nothing was written; a statement_timeout ran out, often while the row was locked by another session: end that session's long transaction, or raise the connector's statement_timeout_ms or the role's statement_timeout)`,
    }
  if (code === '25006')
    return {
      kind: 'unauthorized',
      status: 403,
      message: `${message} (SQLSTATE 25006: the database takes no writes, so nothing was written; point the resource at the primary, or turn default_transaction_read_only off for the role or database)`,
    }
  return undefined
}

export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error)
}

/**
 * Errors only ever raised while a connection opens, before any statement could go over it, whatever step they
 * reach the classifier from: the write certainly was not sent. A refused connection, a name that does not
 * resolve, PostgreSQL's 3D000 (no such database: a statement naming one gets 42P01), a pool's connect timeout.
 * Not EHOSTUNREACH or ENETUNREACH: a route lost under an open connection ends it with those too, a statement on
 * it; nor SQLITE_CANTOPEN, which a statement raises when it cannot open its journal (the backends wrap the
 * opening itself as NotConnectedError, which says what step it was).
 */
function connectOnly(code: string | undefined, message: string): boolean {
  if (code && ['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', '3D000'].includes(code)) return true
  return /timeout exceeded when trying to connect/i.test(message)
}

function notSent(message: string): WriteFailure {
  return { kind: 'not_sent', message: `${message} (the database could not be reached: no statement was sent, so nothing was written)` }
}

/**
 * A lock the database gave up on, rolling the statement or the transaction back: retried, never assumed; proven not
 * applied (`notApplied`), except where it answered a COMMIT (`classifyWriteError` drops the proof there).
 */
function retried(message: string, what: string): WriteFailure {
  return { kind: 'rate_limited', status: 503, retryAfterSeconds: LOCK_RETRY_SECONDS, message: `${message} (${what}; nothing was written, retried)`, notApplied: true }
}

function codeOf(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code
  return typeof code === 'string' ? code : undefined
}

/**
 * Classifies a failed UPDATE. The database refused it (constraint, type, unknown column): `rejected`, nothing
 * was written. A lock it never got (a deadlock, a lock wait timeout, SQLite busy): `rate_limited`, retried. Anything else, a lost connection above all, may have happened after the
 * statement reached the server: `unknown`, never retried blindly. Missing privileges: `unauthorized`.
 */
export function classifyWriteError(error: unknown): WriteFailure {
  if (error instanceof NotConnectedError) {
    const failure = classifyWriteError(error.cause)
    // a credential the server refused at login is said as such (it halts the operation): still nothing was sent
    if (failure.kind === 'unauthorized') return { ...failure, message: `${failure.message} (refused at login, before any statement; nothing was written)` }
    return { kind: 'not_sent', message: `the database could not be reached (${error.message}): no statement was sent, so nothing was written` }
  }
  if (error instanceof NotCommittedError) {
    if (error.cause === undefined) return { kind: 'rejected', status: 500, message: `${error.message}; the transaction was rolled back, nothing was written` }
    const failure = classifyWriteError(error.cause)
    // the database's own answer (a constraint, a lock, a credential) says what it is; a lost connection or no
    // answer is a failure of reach, never of validation: the UPDATE was not sent (the transaction did not begin),
    // or it was sent and its transaction never committed, which the server rolls back (a lost COMMIT is not
    // here: it is thrown as the engine's error, unknown)
    if (failure.kind !== 'unknown' && failure.kind !== 'not_sent') return failure
    // no connection to begin on at all: its own words (not one statement was sent)
    if (!error.updateSent) return failure.kind === 'not_sent' ? failure : { kind: 'not_sent', message: `the transaction could not begin (${error.message}): the UPDATE was never sent, so nothing was written` }
    return { kind: 'rolled_back', message: `${error.message} (the UPDATE was sent, but its transaction was never committed: it was rolled back, so nothing was written)` }
  }
  if (error instanceof CommitFailedError) {
    // an ERROR a statement's own run proves rolled back (statementRefusal) is not taken as proof at COMMIT: what
    // the server did with a transaction whose COMMIT it answered so is not claimed; unknown, reconcile settles it
    // MySQL/MariaDB: an error answering COMMIT (a lock wait timeout, max_statement_time, a deadlock) says nothing
    // of whether the transaction committed (an engine or binlog failure after it, a proxy's own answer): unknown
    const errno = (error.cause as { errno?: unknown } | null)?.errno
    if (typeof errno === 'number')
      return { kind: 'unknown', message: `${error.message} (MySQL error ${errno} at COMMIT: whether the transaction committed is not proven; the write may have been applied)` }
    const code = codeOf(error.cause)
    if (code !== undefined && statementRefusal(code, '') !== undefined)
      return { kind: 'unknown', message: `${error.message} (SQLSTATE ${code} at COMMIT: whether the transaction committed is not proven; the write may have been applied)` }
    const failure = classifyWriteError(error.cause)
    // a lock refused at COMMIT (SQLite busy, a PostgreSQL serialization failure) is retried, but a halt before the
    // retry does not take it as proof that nothing was written: that rests on the ROLLBACK that followed
    // its words likewise: the statement's "nothing was written" is not said of a COMMIT
    if (failure.kind === 'rate_limited') {
      const { notApplied: _, ...rest } = failure
      return { ...rest, message: `${error.message} (a lock not granted at COMMIT: whether the transaction committed is not proven, the write may have been applied; retried, the record read first)` }
    }
    return failure
  }
  const mysqlFailure = classifyMysqlError(error)
  if (mysqlFailure) return mysqlFailure
  const code = codeOf(error)
  const message = messageOf(error)
  if (connectOnly(code, message)) return notSent(message)
  if (code?.startsWith('SQLITE_')) {
    if (/^SQLITE_(CONSTRAINT|MISMATCH|TOOBIG|RANGE)/.test(code)) return { kind: 'rejected', status: 422, message }
    // a lock never obtained (another connection held the file's write lock past the busy timeout, at BEGIN
    // IMMEDIATE, the UPDATE or COMMIT): nothing was judged, so no refusal; as MySQL's lock wait timeout, retried
    if (/^SQLITE_(BUSY|LOCKED)/.test(code)) return retried(message, 'the write lock was not obtained in time')
    // the file itself takes no writes (opened read-only where it could not be opened for writing): said with the fix
    if (code === 'SQLITE_READONLY')
      return {
        kind: 'unauthorized',
        status: 403,
        message: `${message} (SQLITE_READONLY: the gateway could not open the SQLite file for writing, so nothing was written; make the file and its folder writable by the user Warrant runs as, or point the resource at a copy that is)`,
      }
    if (/^SQLITE_(READONLY|AUTH|PERM)/.test(code)) return { kind: 'unauthorized', status: 403, message }
    // SQLITE_ERROR is raised while preparing (no such table or column): the statement never ran
    if (code === 'SQLITE_ERROR') return { kind: 'rejected', status: 500, message }
    return { kind: 'unknown', message }
  }
  if (code && /^[0-9A-Z]{5}$/.test(code)) {
    const cls = code.slice(0, 2)
    if (code === '42501' || cls === '28') return { kind: 'unauthorized', status: cls === '28' ? 401 : 403, message }
    // 22 data exception, 23 integrity constraint: the data was refused
    if (cls === '22' || cls === '23') return { kind: 'rejected', status: 422, message }
    // 42 syntax or unknown column/table: the statement never ran
    if (cls === '42') return { kind: 'rejected', status: 500, message }
    // 40 transaction rollback (serialization failure, deadlock), 55P03 lock not available: certainly not applied;
    // but 40003, "statement completion unknown" (a server or pooler that lost track of it), says it may have been
    if (code === '40003') return { kind: 'unknown', message: `${message} (SQLSTATE 40003, statement completion unknown: the write may have been applied)` }
    const refused = statementRefusal(code, message)
    if (refused) return refused
    if (cls === '40' || code === '55P03') return retried(message, 'rolled back')
    return { kind: 'unknown', message }
  }
  return { kind: 'unknown', message }
}

/**
 * The declared column a table lacks, when a statement failed for that reason (SQLite "no such column",
 * PostgreSQL 42703, MySQL/MariaDB "Unknown column"), else null.
 */
export function missingColumnOf(error: unknown): string | null {
  const message = messageOf(error)
  const code = codeOf(error)
  const sqlite = /no such column: (?:[\w"]+\.)?"?(\w+)"?/i.exec(message)
  if (sqlite) return sqlite[1]!
  const postgres = /column "?(?:\w+\.)?(\w+)"? does not exist/i.exec(message)
  if (postgres && (code === '42703' || code === undefined)) return postgres[1]!
  const mysql = /Unknown column '(?:\w+\.)?(\w+)'/i.exec(message)
  return mysql ? mysql[1]! : null
}

/**
 * Whether a statement failed because the configured table does not exist (SQLite "no such table", PostgreSQL
 * 42P01, MySQL/MariaDB 1146): the config's `connector.table` does not match the database.
 */
export function isMissingTable(error: unknown): boolean {
  const errno = (error as { errno?: unknown } | null)?.errno
  return codeOf(error) === '42P01' || errno === 1146 || /no such table: /i.test(messageOf(error))
}

/**
 * The line of a sql resource's config a read failure blames, for `warrant check`'s advice: the declared field the
 * table lacks, or the table itself; undefined where the failure names none.
 */
export function blamedConfigKey(error: unknown): string | undefined {
  const column = missingColumnOf(error)
  if (column !== null) return `fields.${column}`
  return isMissingTable(error) ? 'connector.table' : undefined
}

/**
 * Why a read failed, in words. A declared column the table lacks is the config not matching the table: said
 * as such, with the fix, never as an outage to retry.
 */
export function readFailure(endpoint: string, error: unknown): string {
  const column = missingColumnOf(error)
  if (column !== null)
    return `reading ${endpoint} failed: it has no column "${column}", which the resource declares in fields; the config does not match the table (fix the resource's fields, or the table) and no record can be judged until it does`
  return `reading ${endpoint} failed: ${messageOf(error)}`
}

/** A view's CHECK OPTION the row would leave (1369); a SIGNAL, a trigger's or a procedure's refusal (1644). */
const REFUSED_VALUE: ReadonlySet<number> = new Set([1369, 1644])
/**
 * Statements the table cannot take, whatever the values: a view that cannot be updated (1288) or whose join would be
 * updated in two tables (1393), a value set on a generated column (MariaDB 1906, MySQL 3105), a trigger updating its
 * own table (1442), collations that cannot be compared (1267, 1270, 1271).
 */
const REFUSED_STATEMENT: ReadonlySet<number> = new Set([1288, 1393, 1906, 3105, 1442, 1267, 1270, 1271])

/** mysql2 errors carry the server's error number and SQLSTATE; undefined for an error of another driver. */
function classifyMysqlError(error: unknown): WriteFailure | undefined {
  const { errno, sqlState } = (error ?? {}) as { errno?: unknown; sqlState?: unknown }
  if (typeof errno !== 'number' || typeof sqlState !== 'string') return undefined
  const message = messageOf(error)
  // 1213 deadlock (the transaction was rolled back), 1205 lock wait timeout, 1969/3024 statement time limit
  if (errno === 1213) return retried(message, 'deadlock, rolled back')
  if (errno === 1205 || errno === 1969 || errno === 3024) return retried(message, 'lock wait or time limit, statement rolled back')
  // the session or the server takes no writes, whatever the values: every write fares the same, so it halts as a
  // refused credential does (PostgreSQL's 25006 too); the statement was refused before it changed a row
  if (errno === 1792)
    return {
      kind: 'unauthorized',
      status: 403,
      message: `${message} (MySQL error 1792: the session is read-only, every transaction it begins READ ONLY (SET SESSION TRANSACTION READ ONLY, from the server's init_connect or a proxy in between), so nothing was written; make the connecting user's sessions read-write, or point the resource at a server that takes writes)`,
    }
  if (errno === 1290 && /read-only/i.test(message))
    return {
      kind: 'unauthorized',
      status: 403,
      message: `${message} (MySQL error 1290: the server runs read-only and takes no writes from this user, so nothing was written; point the resource at the primary, or turn the server's read_only off)`,
    }
  // access denied: to the server (1045), the database (1044), a table or column (1142, 1143)
  if (errno === 1045) return { kind: 'unauthorized', status: 401, message }
  if (errno === 1044 || errno === 1142 || errno === 1143) return { kind: 'unauthorized', status: 403, message }
  // 1049 unknown database: only at the handshake (or USE, never sent); a statement naming one gets 1146
  if (errno === 1049) return notSent(message)
  // refusals MariaDB and MySQL answer with HY000 or a SIGNAL's own SQLSTATE: the same write is refused again
  if (REFUSED_VALUE.has(errno)) return { kind: 'rejected', status: 422, message }
  if (REFUSED_STATEMENT.has(errno)) return { kind: 'rejected', status: 500, message }
  const cls = sqlState.slice(0, 2)
  if (cls === '22' || cls === '23') return { kind: 'rejected', status: 422, message }
  if (cls === '42') return { kind: 'rejected', status: 500, message }
  if (cls === '40') return retried(message, 'rolled back')
  return { kind: 'unknown', message }
}

/**
 * What a failed page read means for the walk. A statement the database refused before running it (an unknown
 * column or table, a syntax error, refused data) fails the same way every time: `refused`, so no continuation
 * sends it again. Missing privileges: `forbidden`, the credential cannot see this part. A lock, a timeout or a
 * lost connection may clear: `unavailable`.
 */
export function classifyReadError(endpoint: string, error: unknown): Extract<ReadPageResult, { kind: 'refused' | 'forbidden' | 'unavailable' }> {
  const message = readFailure(endpoint, error)
  const failure = classifyWriteError(error)
  if (failure.kind === 'unauthorized') return { kind: 'forbidden', status: failure.status, message }
  if (failure.kind === 'rejected' && (failure.status === 500 || failure.status === 422)) {
    const configKey = blamedConfigKey(error)
    return configKey === undefined ? { kind: 'refused', message } : { kind: 'refused', message, configKey }
  }
  return { kind: 'unavailable', message }
}
