import { WarrantError } from '../contract/index.js'

/**
 * A driver's failure in words: its message, with its code when the message does not already say it
 * (`database "w" does not exist (3D000)`, `connect ECONNREFUSED 127.0.0.1:5432`); each of an AggregateError's.
 */
export function failureText(error: unknown): string {
  if (error instanceof AggregateError && error.errors.length > 0) return [...new Set(error.errors.map(failureText))].join('; ')
  const message = error instanceof Error ? error.message || error.name : String(error)
  const code = codeOf(error)
  return code !== null && !message.includes(code) ? `${message} (${code})` : message
}

/** The driver's code of an error (`3D000`, `ECONNREFUSED`, `SQLITE_BUSY`), or null. */
export function codeOf(error: unknown): string | null {
  const code = (error as { code?: unknown } | null)?.code
  return typeof code === 'string' ? code : null
}

/**
 * Failures of the connection to a PostgreSQL store rather than of a statement: the server or database gone
 * (3D000 database does not exist, 57P01/57P02/57P03 admin or crash shutdown, cannot connect now, class 08
 * connection exceptions), the socket refused, reset or cut (pg says "Connection terminated unexpectedly", with no
 * code), a client pg will no longer query. A statement's own error (a constraint, a syntax error: a bug) is not one.
 */
const CONNECTION_CODES = new Set(['3D000', '57P01', '57P02', '57P03', 'ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN'])
const CONNECTION_MESSAGES = /^(Connection terminated|Client has encountered a connection error|Client was closed|Connection ended|timeout exceeded when trying to connect)/

export function isConnectionFailure(error: unknown): boolean {
  if (error instanceof AggregateError && error.errors.length > 0) return error.errors.every(isConnectionFailure)
  const code = codeOf(error)
  if (code !== null && (CONNECTION_CODES.has(code) || code.startsWith('08'))) return true
  return error instanceof Error && CONNECTION_MESSAGES.test(error.message)
}

/** The refusal every use of an unreachable PostgreSQL store gets: 503 `store_unavailable`, naming the store and the cause. */
export function unreachableStore(display: string, error: unknown): WarrantError {
  const code = codeOf(error)
  return new WarrantError('store_unavailable', `PostgreSQL store "${display}" cannot be reached: ${failureText(error)}`, {
    store: display,
    reason: 'unreachable',
    ...(code === null ? {} : { driver_code: code }),
  })
}
