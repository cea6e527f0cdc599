import type { ResourceConfig } from '../config/index.js'
import type { Connector, UpstreamCallListener } from './connector.js'
import { createHttpConnector } from './http/http-connector.js'
import { createSqlConnector } from './sql/sql-connector.js'

export interface CreateConnectorOptions {
  readonly resource: ResourceConfig
  readonly onCall?: UpstreamCallListener
  readonly env?: NodeJS.ProcessEnv
  /** Connections a sql upstream's pool may open for writes and reads by id (the executor's concurrency). */
  readonly maxConnections?: number
  /** The gateway's clock: an http upstream's Retry-After HTTP-date is read against it. */
  readonly clock?: () => Date
}

/** The connector for a resource's declared kind. */
export function createConnector(options: CreateConnectorOptions): Connector {
  return options.resource.connector.kind === 'sql'
    ? createSqlConnector({ resource: options.resource, onCall: options.onCall, env: options.env, ...(options.maxConnections === undefined ? {} : { maxConnections: options.maxConnections }) })
    : createHttpConnector({ resource: options.resource, onCall: options.onCall, env: options.env, ...(options.clock ? { clock: options.clock } : {}) })
}
