import { WarrantError } from '../contract/index.js'
import { environmentLabel, type ResourceConfig, type WarrantConfig } from '../config/index.js'
import { createConnector, type Connector, type UpstreamCallListener } from '../connectors/index.js'
import { instrumentConnector, type Telemetry } from '../telemetry/index.js'
import { createFieldPolicy, type FieldPolicy } from './field-policy.js'

/** One configured resource, ready to use: its config, its connector, its field policy and its labels. */
export interface Resource {
  readonly name: string
  readonly config: ResourceConfig
  readonly environment: string
  readonly connector: Connector
  readonly policy: FieldPolicy
  /** Where walks of this resource report how they ended; absent, nothing is reported. */
  readonly telemetry?: Telemetry
  /** `execution.max_retry_after_seconds`: the longest wait after a 429 or 503 a walk of it names (SearchOptions). */
  readonly maxRetryAfterSeconds?: number
}

export interface Catalogue {
  readonly names: readonly string[]
  /** Throws `not_found` for an unknown name, without listing the others (a token may not be scoped to them). */
  get(name: string): Resource
  list(): readonly Resource[]
  close(): Promise<void>
}

export interface CatalogueOptions {
  readonly config: WarrantConfig
  readonly onCall?: UpstreamCallListener
  readonly env?: NodeJS.ProcessEnv
  /** Metrics and spans: each connector's walk pages are measured and traced. */
  readonly telemetry?: Telemetry
  /** The gateway's clock, given to each connector (a Retry-After HTTP-date is read against it). */
  readonly clock?: () => Date
}

/** The sql connector's own default pool size, kept as a floor. */
const SQL_POOL_MIN = 5

/**
 * Builds every resource's connector once. Connectors hold the upstream credentials; nothing above this
 * layer ever sees one.
 *
 * @example const catalogue = createCatalogue({ config }); catalogue.get('subscriptions').connector
 */
export function createCatalogue(options: CatalogueOptions): Catalogue {
  const resources = new Map<string, Resource>()
  // Every executor worker holds a connection for its write; one more serves the batch re-reads beside them.
  const maxConnections = Math.max(SQL_POOL_MIN, options.config.execution.concurrency + 1)
  for (const [name, config] of Object.entries(options.config.resources)) {
    const connector = connectorOf(name, () => createConnector({ resource: config, onCall: options.onCall, env: options.env, maxConnections, ...(options.clock ? { clock: options.clock } : {}) }))
    resources.set(name, {
      name,
      config,
      environment: environmentLabel(config.environment),
      connector: options.telemetry ? instrumentConnector(connector, name, options.telemetry) : connector,
      policy: createFieldPolicy(config),
      maxRetryAfterSeconds: options.config.execution.max_retry_after_seconds,
      ...(options.telemetry ? { telemetry: options.telemetry } : {}),
    })
  }
  const names = [...resources.keys()]
  return {
    names,
    get(name) {
      const resource = resources.get(name)
      // Never the list of resources: this answer reaches tokens scoped to a few of them. GET /v1/resources
      // (list_resources) names the ones the caller may use.
      if (!resource) throw new WarrantError('not_found', `unknown resource "${name}"; GET /v1/resources (list_resources) lists the ones this token may use`, { resource: name })
      return resource
    },
    list: () => [...resources.values()],
    async close() {
      await Promise.allSettled([...resources.values()].map((r) => r.connector.close()))
    },
  }
}

/** Builds a resource's connector; a config error it finds names the resource (`resources.crm.connector.…`). */
function connectorOf(name: string, build: () => Connector): Connector {
  try {
    return build()
  } catch (error) {
    if (!(error instanceof WarrantError) || error.code !== 'invalid_request') throw error
    const where = error.message.startsWith('connector.') ? `resources.${name}.` : `resources.${name}: `
    throw new WarrantError(error.code, `${where}${error.message}`, error.details)
  }
}
