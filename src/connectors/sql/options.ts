import type { UpstreamCallListener, Connector } from '../connector.js'
import type { ResourceConfig } from '../../config/index.js'
import type { SqlDialectName } from './url.js'

export interface SqlConnectorOptions {
  /** A resource whose `connector.kind` is `sql`; it must declare `version_field`. */
  readonly resource: ResourceConfig
  /** Receives one event per statement sent upstream (never values, never credentials). */
  readonly onCall?: UpstreamCallListener
  /** A read session with no read for this long is closed and its next read is `cursor_expired`. Default 5 minutes. */
  readonly sessionIdleTimeoutMs?: number
  /** PostgreSQL, MySQL: pooled connections for writes and reads by id. Default 5; the catalogue passes `execution.concurrency` + 1. */
  readonly maxConnections?: number
  /** PostgreSQL, MySQL: connections for read sessions, a pool of their own so walks never starve writes. Default 10. */
  readonly maxSessions?: number
  /**
   * PostgreSQL `statement_timeout`, SQLite's wait for another connection's lock (on timers, `whileBusy`),
   * MySQL/MariaDB statement time limit and `innodb_lock_wait_timeout` (whole seconds, at least 1), in ms. Default the resource's
   * `connector.statement_timeout_ms`, else 30 s (5 s on SQLite).
   */
  readonly statementTimeoutMs?: number
  /** The password for a postgres or mysql URL without one; default: `connector.password` resolved by `readSecret`. */
  readonly password?: string
  /** Where `connector.password` is read from (default `process.env`): the gateway's, as its other secrets are. */
  readonly env?: NodeJS.ProcessEnv
  /**
   * How old the catalogue facts a write relies on (UPDATE triggers, engine, keys, column types) may be before
   * they are read again, in ms. Default 5 s: a migration is seen by a running operation's writes within this.
   */
  readonly catalogueMaxAgeMs?: number
  /** The clock for new timestamp versions and `updated_at`. */
  readonly now?: () => Date
}

/** A connector to one SQL table. */
export interface SqlConnector extends Connector {
  readonly kind: 'sql'
  readonly dialect: SqlDialectName
  /** The name this table is reported under (`connector.source`). */
  readonly source: string
}
