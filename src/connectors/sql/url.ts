import { isAbsolute, resolve } from 'node:path'
import { maskPassword, MYSQL_SSL_MODE_PARAM, MYSQL_SSL_MODES, mysqlSslModeOf, WarrantError, type MysqlSslMode } from '../../contract/index.js'

/** Where an upstream SQL table lives. `display` is safe to log: any password is masked. */
export type SqlLocation =
  | { readonly dialect: 'sqlite'; readonly filename: string; readonly display: string }
  | { readonly dialect: 'postgres'; readonly connectionString: string; readonly display: string }
  | {
      readonly dialect: 'mysql'
      readonly host: string
      readonly port: number
      readonly user: string
      readonly password: string | undefined
      readonly database: string
      /** the TLS asked by `?ssl-mode=`; DISABLED when the URL says none */
      readonly sslMode: MysqlSslMode
      readonly display: string
    }

export type SqlDialectName = SqlLocation['dialect']

/**
 * Reads a sql connector URL: `sqlite:/abs/file.db`, `sqlite:///abs/file.db`, `sqlite:./relative.db` (against the
 * working folder; the config loader has already made it absolute), `postgres://user@host:port/db`, or
 * `mysql://user@host:port/db?ssl-mode=VERIFY_IDENTITY` (also spelled `mariadb://`; `ssl-mode` is the only parameter).
 * `password`, when given and the URL has none, is put into the connection string (never into `display`).
 *
 * @throws WarrantError('invalid_request') naming what is wrong, never the password.
 */
export function parseSqlUrl(url: string, password?: string): SqlLocation {
  const trimmed = url.trim()
  const scheme = /^([a-zA-Z][a-zA-Z0-9+.-]*):/.exec(trimmed)?.[1]?.toLowerCase()
  if (scheme === 'sqlite') {
    let filename = trimmed.slice('sqlite:'.length)
    if (filename.startsWith('///')) filename = filename.slice(2)
    else if (filename.startsWith('//')) throw invalid(`sql connector URL "${trimmed}" names a host; SQLite takes a file path (sqlite:/abs/file.db)`)
    if (filename === '' || filename.endsWith('/')) throw invalid(`sql connector URL "${trimmed}" does not name a database file`)
    if (filename === ':memory:') throw invalid('sqlite::memory: cannot be an upstream: read sessions need their own connection to the same file')
    return { dialect: 'sqlite', filename: isAbsolute(filename) ? filename : resolve(filename), display: trimmed }
  }
  if (scheme === 'postgres' || scheme === 'postgresql') {
    let parsed: URL
    try {
      parsed = new URL(trimmed)
    } catch {
      throw invalid(`sql connector URL "${maskPassword(trimmed)}" is not a valid PostgreSQL URL`)
    }
    if (password !== undefined && parsed.password === '') parsed.password = encodeURIComponent(password)
    return { dialect: 'postgres', connectionString: parsed.toString(), display: maskPassword(trimmed) }
  }
  if (scheme === 'mysql' || scheme === 'mariadb') return parseMysql(trimmed, password)
  throw invalid(`sql connector URL "${maskPassword(trimmed)}" has an unsupported scheme; expected sqlite:<path>, postgres://… or mysql://…`)
}

function parseMysql(url: string, password: string | undefined): SqlLocation {
  const display = maskPassword(url)
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch {
    throw invalid(`sql connector URL "${display}" is not a valid MySQL URL`)
  }
  const database = decodeURIComponent(parsed.pathname.replace(/^\//, ''))
  if (database === '' || database.includes('/')) throw invalid(`sql connector URL "${display}" does not name one database (mysql://user@host:port/database)`)
  if (parsed.hostname === '') throw invalid(`sql connector URL "${display}" names no host`)
  const port = parsed.port === '' ? 3306 : Number(parsed.port)
  // the mysql backend is built from these parts, not from the URL: a parameter it does not read would be dropped
  // without a word (`?ssl=true` read as asking for TLS, and none asked)
  const unread = [...parsed.searchParams.keys()].find((key) => key !== MYSQL_SSL_MODE_PARAM)
  if (unread !== undefined)
    throw invalid(`sql connector URL "${display}" has the query parameter "${unread}", which a mysql connection does not read; the only one is ${MYSQL_SSL_MODE_PARAM} (${MYSQL_SSL_MODES.join(', ')})`)
  const modeText = parsed.searchParams.get(MYSQL_SSL_MODE_PARAM)
  const sslMode = modeText === null ? 'DISABLED' : mysqlSslModeOf(modeText)
  if (sslMode === undefined)
    throw invalid(`sql connector URL "${display}" has ${MYSQL_SSL_MODE_PARAM} "${modeText}"; expected one of ${MYSQL_SSL_MODES.join(', ')} (PREFERRED is not: this driver cannot fall back to plain, so say which)`)
  return {
    dialect: 'mysql',
    host: parsed.hostname.replace(/^\[(.*)\]$/, '$1'),
    port,
    user: decodeURIComponent(parsed.username) || 'root',
    password: parsed.password !== '' ? decodeURIComponent(parsed.password) : password,
    database,
    sslMode,
    display,
  }
}

function invalid(message: string): WarrantError {
  return new WarrantError('invalid_request', message)
}
