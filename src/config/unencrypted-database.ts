import type { z } from 'zod'
import { isLoopbackHost, MYSQL_SSL_MODE_PARAM, mysqlSslModeOf } from '../contract/index.js'

/**
 * The libpq sslmode values that make TLS a condition of the connection: without it, none is made. `prefer` and
 * `allow` are not among them: libpq (and pg 9, by its own notice) falls back to plain when the server offers no
 * TLS. `no-verify` is pg's own (libpq's `require`). In pg 8 `require` and `verify-ca` check the certificate as
 * `verify-full` does; with `uselibpqcompat=true` (and in pg 9) they do not, which is why the refusal names verify-full.
 */
const PG_TLS_MODES = new Set(['require', 'verify-ca', 'verify-full', 'no-verify'])

/** Where a database URL connects and whether the driver is made to use TLS there; undefined for a URL that is not postgres or mysql. */
interface DatabaseReach {
  readonly driver: 'postgres' | 'mysql'
  readonly host: string
  /** loopback or a unix socket: nothing crosses a network */
  readonly local: boolean
  readonly tls: boolean
  /** what the URL said that does not make TLS a condition (`sslmode=prefer`), to name in the refusal */
  readonly said?: string
}

/** The last value of a query parameter, as pg's connection-string parser keeps it. */
function lastParam(params: URLSearchParams, name: string): string | undefined {
  return params.getAll(name).at(-1)
}

/**
 * Reads a URL as its driver will: pg takes `host=` from the query over the URL's host (a path there is a unix
 * socket), an empty host from PGHOST (else localhost), and TLS from `sslmode` (which wins) or `ssl=true|1`;
 * Warrant's mysql backend connects to the URL's host with the TLS of `ssl-mode`.
 */
function reachOf(url: string, env: NodeJS.ProcessEnv): DatabaseReach | undefined {
  const scheme = /^\s*([a-zA-Z][a-zA-Z0-9+.-]*):/.exec(url)?.[1]?.toLowerCase()
  const driver = scheme === 'postgres' || scheme === 'postgresql' ? 'postgres' : scheme === 'mysql' || scheme === 'mariadb' ? 'mysql' : undefined
  if (driver === undefined || !URL.canParse(url.trim())) return undefined // the URL's own reader names that
  const parsed = new URL(url.trim())
  let hostname: string
  try {
    hostname = decodeURIComponent(parsed.hostname).replace(/^\[(.*)\]$/, '$1')
  } catch {
    return undefined
  }
  const params = parsed.searchParams
  if (driver === 'mysql') {
    const mode = mysqlSslModeOf(lastParam(params, MYSQL_SSL_MODE_PARAM) ?? '')
    const said = params.has(MYSQL_SSL_MODE_PARAM) ? `${MYSQL_SSL_MODE_PARAM}=${lastParam(params, MYSQL_SSL_MODE_PARAM)}` : undefined
    return { driver, host: hostname, local: isLoopbackHost(hostname), tls: mode !== undefined && mode !== 'DISABLED', ...(said ? { said } : {}) }
  }
  const host = lastParam(params, 'host') || hostname || env.PGHOST || 'localhost'
  const sslmode = lastParam(params, 'sslmode')
  const ssl = lastParam(params, 'ssl')
  const tls = sslmode !== undefined ? PG_TLS_MODES.has(sslmode) : ssl === 'true' || ssl === '1'
  const said = sslmode !== undefined ? `sslmode=${sslmode}` : ssl !== undefined ? `ssl=${ssl}` : undefined
  return { driver, host, local: host.startsWith('/') || isLoopbackHost(host), tls, ...(said ? { said } : {}) }
}

/** The host a postgres or mysql URL connects to, as its driver reads it (a path: a unix socket); undefined for any other URL. */
export function databaseHostOf(url: string, env: NodeJS.ProcessEnv = process.env): string | undefined {
  return reachOf(url, env)?.host
}

const HOW_TO_TLS = {
  postgres:
    'add sslmode=verify-full to the URL (sslmode=require also encrypts, but only verify-full is sure to check that the server is the one named, which is what stops a man in the middle)',
  mysql: `add ${MYSQL_SSL_MODE_PARAM}=VERIFY_IDENTITY to the URL (${MYSQL_SSL_MODE_PARAM}=REQUIRED also encrypts, but does not check the server's certificate; only VERIFY_IDENTITY stops a man in the middle)`,
} as const

/**
 * Refuses (as an issue at `path`) a postgres or mysql URL to a host off this machine whose driver is not made to
 * use TLS, unless `unencrypted` says the network between is the operator's own. Over such a connection every
 * record read or written (and, for some mysql auth plugins, the password) crosses the network readable, and
 * anything on the path can cut a result set, which a walk would then call complete. Loopback and unix sockets
 * cross no network; sqlite URLs are files.
 *
 * @example
 * schema.superRefine((c, ctx) => refuseUnencryptedDatabase(c.url, c.unencrypted === true, ['url'], ctx, 'connector'))
 */
export function refuseUnencryptedDatabase(
  url: string,
  unencrypted: boolean,
  path: readonly (string | number)[],
  ctx: z.RefinementCtx,
  what: string,
  env: NodeJS.ProcessEnv = process.env,
): void {
  const reach = reachOf(url, env)
  if (reach === undefined || reach.local || reach.tls || unencrypted) return
  ctx.addIssue({
    code: 'custom',
    path: [...path],
    message: `reaches the database at "${reach.host}", off this machine, without TLS${reach.said ? ` (${reach.said} lets it be plain)` : ''}: every record this ${what} reads or writes (and perhaps the password) crosses the network readable, and anything on the path can cut a result set; ${HOW_TO_TLS[reach.driver]}, or set unencrypted: true on this ${what} if the network between is your own`,
  })
}
