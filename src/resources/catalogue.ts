import { randomBytes } from 'node:crypto'
import { WarrantError } from '../contract/index.js'
import { environmentLabel, withinResource, type ResourceConfig, type WarrantConfig } from '../config/index.js'
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
  /**
   * The same upstream asked with a credential it never issued (a random secret in place of the configured one),
   * its calls reported like the connector's: `warrant check` asks whether the upstream refuses it. Null where that
   * means nothing: a sql upstream, an http resource without a credential. Built on first use, closed with the catalogue.
   *
   * @example const stranger = catalogue.get('crm').stranger?.() ?? null
   */
  readonly stranger?: () => Connector | null
}

export interface Catalogue {
  readonly names: readonly string[]
  /** Throws `not_found` for an unknown name, without listing the others (a token may not be scoped to them). */
  get(name: string): Resource
  list(): readonly Resource[]
  close(): Promise<void>
}

export interface CatalogueOptions extends CatalogueWiring {
  readonly config: WarrantConfig
  readonly env?: NodeJS.ProcessEnv
  /** The gateway's clock, given to each connector (a Retry-After HTTP-date is read against it). */
  readonly clock?: () => Date
}

/** What the connectors report to: known only once the store exists (the audit log lives there). */
export interface CatalogueWiring {
  readonly onCall?: UpstreamCallListener
  /** Metrics and spans: each connector's walk pages are measured and traced. */
  readonly telemetry?: Telemetry
}

/**
 * Every resource's connector, built: whatever a connector refuses in its config (a base_url, a path template, a
 * sql URL, an id or version field) has been raised, naming the resource, with nothing connected, read or
 * written. `wire` makes them the catalogue.
 */
export interface PreparedCatalogue {
  /** Call once: the connectors' calls go to `onCall` from now on (none is made before: no one holds them). */
  wire(wiring: CatalogueWiring): Catalogue
  /** For a gateway that stops opening (its store refused, a later step failed): the connectors' pools and agents closed, as the wired catalogue's `close` does. */
  close(): Promise<void>
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
  return prepareCatalogue(options).wire(options)
}

/**
 * Builds every resource's connector before anything they report to exists, so a gateway refuses a config its
 * connectors cannot run before it creates or migrates the store (see `openGateway`). Building connects nothing:
 * an unreachable upstream is found by the first request, never here.
 *
 * @example const prepared = prepareCatalogue({ config }); const store = await createStore(…); const catalogue = prepared.wire({ onCall })
 */
export function prepareCatalogue(options: Omit<CatalogueOptions, keyof CatalogueWiring>): PreparedCatalogue {
  const connectors = new Map<string, Connector>()
  const strangers = new Map<string, Connector>()
  // The connectors are told where to report now; the listener itself is known at `wire`.
  let listener: UpstreamCallListener | undefined
  const relay: UpstreamCallListener = (call) => listener?.(call)
  // Every executor worker holds a connection for its write; one more serves the batch re-reads beside them.
  const maxConnections = Math.max(SQL_POOL_MIN, options.config.execution.concurrency + 1)
  const closeAll = async () => void (await Promise.allSettled([...connectors.values(), ...strangers.values()].map((c) => c.close())))
  const stranger = (name: string) => {
    const built = strangers.get(name)
    if (built) return built
    const config = strangerConfig(options.config.resources[name]!)
    if (config === null) return null
    const connector = createConnector({ resource: config, onCall: relay, env: { [STRANGER_SECRET_ENV]: randomBytes(24).toString('base64url') }, ...(options.clock ? { clock: options.clock } : {}) })
    strangers.set(name, connector)
    return connector
  }
  try {
    for (const [name, config] of Object.entries(options.config.resources))
      connectors.set(name, connectorOf(name, () => createConnector({ resource: config, onCall: relay, env: options.env, maxConnections, ...(options.clock ? { clock: options.clock } : {}) })))
  } catch (error) {
    void closeAll()
    throw error
  }
  return {
    wire(wiring) {
      listener = wiring.onCall
      return catalogueOf(options.config, connectors, stranger, wiring.telemetry, closeAll)
    },
    close: closeAll,
  }
}

function catalogueOf(
  config: WarrantConfig,
  connectors: ReadonlyMap<string, Connector>,
  stranger: (name: string) => Connector | null,
  telemetry: Telemetry | undefined,
  close: () => Promise<void>,
): Catalogue {
  const resources = new Map<string, Resource>()
  for (const [name, connector] of connectors) {
    const resource = config.resources[name]!
    resources.set(name, {
      name,
      config: resource,
      environment: environmentLabel(resource.environment),
      connector: telemetry ? instrumentConnector(connector, name, telemetry) : connector,
      policy: createFieldPolicy(resource),
      maxRetryAfterSeconds: config.execution.max_retry_after_seconds,
      stranger: () => stranger(name),
      ...(telemetry ? { telemetry } : {}),
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
    close,
  }
}

/** Where a stranger connector's secret is read from: its own environment, which holds nothing else. */
const STRANGER_SECRET_ENV = 'WARRANT_STRANGER_SECRET'

/** The resource's config with its credential's secret read from the stranger's environment; null without a credential. */
function strangerConfig(resource: ResourceConfig): ResourceConfig | null {
  if (resource.connector.kind !== 'http' || !resource.connector.credential) return null
  return { ...resource, connector: { ...resource.connector, credential: { ...resource.connector.credential, secret: { env: STRANGER_SECRET_ENV } } } }
}

/** Builds a resource's connector; a config error it finds names the resource (`resources.crm.connector.…`). */
function connectorOf(name: string, build: () => Connector): Connector {
  try {
    return build()
  } catch (error) {
    if (!(error instanceof WarrantError) || error.code !== 'invalid_request') throw error
    throw withinResource(name, error)
  }
}
