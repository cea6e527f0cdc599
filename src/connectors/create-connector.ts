import type { ResourceConfig } from '../config/index.js'
import type { Connector, UpstreamCallListener } from './connector.js'
import { createHttpConnector } from './http/http-connector.js'
import { createSqlConnector } from './sql/sql-connector.js'

export interface CreateConnectorOptions {
  readonly resource: ResourceConfig
  readonly onCall?: UpstreamCallListener
  readonly env?: NodeJS.ProcessEnv
}

/** The connector for a resource's declared kind. */
export function createConnector(options: CreateConnectorOptions): Connector {
  return options.resource.connector.kind === 'sql'
    ? createSqlConnector({ resource: options.resource, onCall: options.onCall })
    : createHttpConnector({ resource: options.resource, onCall: options.onCall, env: options.env })
}
