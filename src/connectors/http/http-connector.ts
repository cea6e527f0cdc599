import type { HttpConnectorConfig, ResourceConfig } from '../../config/schema.js'
import { configKeyRefusal } from '../../config/config-key.js'
import { readSecret } from '../../config/secret.js'
import { WarrantError } from '../../contract/index.js'
import type { Connector, ReadSession, UpstreamCallListener } from '../connector.js'
import { createContext, type HttpContext } from './context.js'
import { createFetchClient } from './fetch-client.js'
import { createNodeClient } from './node-client.js'
import { readRecordsByIds } from './read-by-ids.js'
import { readListPage } from './read-page.js'
import { createRedactor } from './redaction.js'
import { assertRelativePath, assertSafeBaseUrl, placeholdersOf } from './url-guard.js'
import { writeRecord } from './write-record.js'

export interface HttpConnectorOptions {
  /** A parsed resource whose `connector.kind` is `http`. */
  readonly resource: ResourceConfig
  /** Where `credential.secret.env` is looked up; default `process.env`. */
  readonly env?: NodeJS.ProcessEnv
  /** Receives every upstream call (source, method, path template, status, outcome, duration). */
  readonly onCall?: UpstreamCallListener
  /** A fetch to send the requests with (e.g. one with a proxy dispatcher); default node:http with kept-alive connections. */
  readonly fetch?: typeof fetch
  /** The gateway's clock, which a Retry-After HTTP-date is read against; default the process's. */
  readonly clock?: () => Date
}

/**
 * A connector for a REST upstream federated over one or more sources (shards, tenants, regions). It calls
 * only the configured base URLs, with paths built from the declared templates; it holds the credential and
 * never returns it. There is no snapshot: a walk over HTTP sees the data move under it, and says so.
 *
 * Throws `WarrantError('invalid_request')` at construction for an unsafe base URL (link-local, cloud
 * metadata, credentials in the URL), a bad path template, or a secret that cannot be read.
 *
 * @example
 * const connector = createHttpConnector({ resource, onCall: (call) => audit.record(call) })
 * const session = await connector.openSession()
 * const page = await session.readPage({ source: 'eu', filter: { status: 'past_due' }, position: null, pageSize: 100 })
 */
export function createHttpConnector(options: HttpConnectorOptions): Connector {
  const { resource } = options
  if (resource.connector.kind !== 'http')
    throw new WarrantError('invalid_request', `createHttpConnector needs an http connector, not ${resource.connector.kind}`)
  const config: HttpConnectorConfig = resource.connector
  checkTemplates(config)

  const bases = new Map<string, URL>()
  config.sources.forEach((source, i) => {
    if (bases.has(source.name)) throw configKeyRefusal(`connector.sources[${i}].name`, `source "${source.name}" is declared twice`, { source: source.name })
    bases.set(source.name, assertSafeBaseUrl(source.name, source.base_url, `connector.sources[${i}].base_url`))
  })

  let secret: string | null = null
  let credentialHeader: readonly [string, string] | null = null
  if (config.credential) {
    secret = readSecret(config.credential.secret, options.env ?? process.env, 'connector.credential.secret')
    const value = config.credential.scheme ? `${config.credential.scheme} ${secret}` : secret
    credentialHeader = [config.credential.header, value]
  }

  const client = options.fetch ? createFetchClient(options.fetch) : createNodeClient()
  const ctx: HttpContext = createContext({
    resource,
    config,
    bases,
    credentialHeader,
    redact: createRedactor(secret),
    client,
    ...(options.onCall ? { onCall: options.onCall } : {}),
    ...(options.clock ? { clock: options.clock } : {}),
  })

  return {
    kind: 'http',
    sources: ctx.sourceNames,
    ordering: 'upstream order',
    // only a record count (offset) or a key (keyset) provably holds at any size; an upstream's cursor may hide a page number
    sizedPositions: config.list.pagination.style !== 'offset' && config.list.pagination.style !== 'keyset',
    async openSession(): Promise<ReadSession> {
      return {
        consistentSnapshot: false,
        snapshot: null,
        positions: positionsOf(config, resource.id_field),
        readPage: (request) => readListPage(ctx, request),
        close: async () => undefined,
      }
    },
    readByIds: (ids, signal, sourceOf) => readRecordsByIds(ctx, ids, signal, sourceOf),
    write: (request) => writeRecord(ctx, request),
    close: async () => client.close(),
  }
}

/**
 * What a position survives. Offset pages re-read the previous page's last record (`checked`). A keyset walk
 * from the id, strictly after the last key (`start_after`), cannot skip or repeat a record that stayed; on another
 * field ties may be skipped, and an inclusive start key with a skip parameter skips a record when the last one
 * was deleted, so those prove nothing. Cursors, page numbers and links say nothing about movement.
 */
function positionsOf(config: HttpConnectorConfig, idField: string): 'keyset' | 'checked' | 'opaque' {
  const pagination = config.list.pagination
  if (pagination.style === 'offset') return 'checked'
  if (pagination.style === 'keyset' && pagination.skip_param === undefined && (pagination.field ?? idField) === idField) return 'keyset'
  return 'opaque'
}

/** The list and batch paths have no placeholder; the get path has `{id}` and nothing else. All stay relative. */
function checkTemplates(config: HttpConnectorConfig): void {
  const refuse = (key: string, why: string): never => {
    throw configKeyRefusal(`connector.${key}`, why)
  }
  const check = (key: string, template: string) => {
    try {
      assertRelativePath(template.replace(/\{[^{}]*\}/g, 'x'))
    } catch (error) {
      refuse(key, `${template}: ${(error as Error).message}`)
    }
  }
  check('list.path', config.list.path)
  check('get.path', config.get.path)
  if (placeholdersOf(config.list.path).length > 0) refuse('list.path', `${config.list.path} cannot have placeholders`)
  const batch = config.get.batch
  if (batch) {
    check('get.batch.path', batch.path)
    if (placeholdersOf(batch.path).length > 0) refuse('get.batch.path', `${batch.path} cannot have placeholders (the ids go in ${batch.ids_param})`)
  }
  const getPlaceholders = placeholdersOf(config.get.path)
  if (!getPlaceholders.includes('id') || getPlaceholders.some((p) => p !== 'id'))
    refuse('get.path', `${config.get.path} must contain {id} and no other placeholder`)
}
