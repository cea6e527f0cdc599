import { maskPassword, WarrantError } from '../contract/index.js'

/** Where the store lives, as read from a store URL. `display` is safe to log: any password is masked. */
export type StoreLocation =
  | { readonly dialect: 'sqlite'; readonly filename: string; readonly memory: boolean; readonly display: string }
  | { readonly dialect: 'postgres'; readonly connectionString: string; readonly display: string }

/**
 * A store URL that cannot be used; the message says what is wrong with it and which stores are supported, and
 * never contains a password. A config mistake: `invalid_request` on every surface, exit 2 from the CLI.
 */
export class InvalidStoreUrlError extends WarrantError {
  constructor(message: string) {
    super('invalid_request', message)
  }
}

const SQLITE_MEMORY = ':memory:'
const EXPECTED_FORMS = 'the supported stores are SQLite and PostgreSQL: sqlite:<path>, sqlite::memory:, or postgres://user@host:port/database'

/**
 * Parse a store URL.
 *
 * @example
 * parseStoreUrl('sqlite:./data/warrant.db') // { dialect: 'sqlite', filename: './data/warrant.db', memory: false, ... }
 * parseStoreUrl('sqlite::memory:')          // { dialect: 'sqlite', filename: ':memory:', memory: true, ... }
 * parseStoreUrl('postgres://warrant:pw@db:5432/warrant') // { dialect: 'postgres', display: 'postgres://warrant:***@db:5432/warrant', ... }
 *
 * @throws InvalidStoreUrlError naming the problem (empty, unknown scheme, missing path, malformed URL, ...).
 */
export function parseStoreUrl(url: string): StoreLocation {
  const trimmed = url.trim()
  if (trimmed === '') {
    throw new InvalidStoreUrlError(`store URL is empty; ${EXPECTED_FORMS}`)
  }
  const scheme = /^([a-zA-Z][a-zA-Z0-9+.-]*):/.exec(trimmed)?.[1]?.toLowerCase()
  if (scheme === 'sqlite') return parseSqlite(trimmed)
  if (scheme === 'postgres' || scheme === 'postgresql') return parsePostgres(trimmed)
  if (scheme === undefined) {
    throw new InvalidStoreUrlError(`store URL "${maskPassword(trimmed)}" has no scheme; ${EXPECTED_FORMS}`)
  }
  if (scheme === 'mysql' || scheme === 'mariadb') {
    throw new InvalidStoreUrlError(
      `store URL scheme "${scheme}:" is not supported (in "${maskPassword(trimmed)}"): the store is SQLite or PostgreSQL; MySQL/MariaDB can be a sql upstream (connector.url), not the store`,
    )
  }
  throw new InvalidStoreUrlError(
    `store URL scheme "${scheme}:" is not supported (in "${maskPassword(trimmed)}"); ${EXPECTED_FORMS}`,
  )
}

function parseSqlite(url: string): StoreLocation {
  let filename = url.slice('sqlite:'.length)
  if (filename.startsWith('//')) {
    // `sqlite:///abs/path.db` is the common URL spelling of an absolute path; `sqlite://name` would
    // silently turn a host-looking word into a relative file, so it is refused rather than guessed.
    if (!filename.startsWith('///')) {
      throw new InvalidStoreUrlError(
        `store URL "${url}" names a host; SQLite takes a file path: sqlite:./relative.db, sqlite:/absolute.db or sqlite:///absolute.db`,
      )
    }
    filename = filename.slice(2)
  }
  if (filename === '') {
    throw new InvalidStoreUrlError(`store URL "${url}" has no file path; ${EXPECTED_FORMS}`)
  }
  if (filename.includes('?') || filename.includes('#')) {
    // Options in a query string would otherwise become part of the file name without any effect.
    throw new InvalidStoreUrlError(`store URL "${url}" has a query string or fragment; SQLite store URLs take a plain file path`)
  }
  if (filename.endsWith('/')) {
    throw new InvalidStoreUrlError(`store URL "${url}" names a folder; it must name a database file`)
  }
  const memory = filename === SQLITE_MEMORY
  return { dialect: 'sqlite', filename, memory, display: url }
}

function parsePostgres(url: string): StoreLocation {
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch {
    throw new InvalidStoreUrlError(`store URL "${maskPassword(url)}" is not a valid PostgreSQL URL; ${EXPECTED_FORMS}`)
  }
  const display = maskPassword(url)
  if (parsed.hostname === '' && !parsed.searchParams.has('host')) {
    throw new InvalidStoreUrlError(`store URL "${display}" has no host; expected postgres://user@host:port/database`)
  }
  const path = parsed.pathname.replace(/^\//, '')
  if (path.includes('/')) {
    // the path is not quoted apart: a password with an unencoded "/" reads as a port and a path (`app:12/pw@db`)
    throw new InvalidStoreUrlError(`store URL "${display}" has a path of more than one segment; it must be a single database name`)
  }
  for (const [part, value] of [
    ['user name', parsed.username],
    ['password', parsed.password],
    ['database name', path],
  ] as const) {
    try {
      decodeURIComponent(value)
    } catch {
      throw new InvalidStoreUrlError(`store URL "${display}" has a badly percent-encoded ${part}`)
    }
  }
  return { dialect: 'postgres', connectionString: url, display }
}
