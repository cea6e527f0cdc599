import type { HttpConnectorConfig, ResourceConfig } from '../../config/schema.js'
import { WarrantError } from '../../contract/index.js'
import type { UpstreamCallListener } from '../connector.js'
import type { Redactor } from './redaction.js'
import { answeredStatus } from './upstream-answer.js'
import type { UpstreamClient, UpstreamExchange } from './upstream-request.js'

/** One request the connector is about to send, with what the call log records about it. */
export interface CallSpec {
  readonly source: string
  readonly method: string
  /** The path template (`/subscriptions/{id}`), never the rendered URL. */
  readonly endpoint: string
  readonly targetId?: string
  /** a read of several ids in one request: how many */
  readonly ids?: number
  readonly url: URL
  readonly headers?: Readonly<Record<string, string>>
  readonly body?: string
  readonly signal?: AbortSignal
}

/** What the connector's parts share: its config, its sources, the credential headers and the redactor. */
export interface HttpContext {
  readonly resource: ResourceConfig
  readonly config: HttpConnectorConfig
  readonly sourceNames: readonly string[]
  readonly redact: Redactor
  /** The base URL of a configured source; an unknown name is the caller's error. */
  baseOf(source: string): URL
  /** Sends one request with the credential; the answer is not yet reported. */
  send(spec: CallSpec): Promise<UpstreamExchange>
  /** Reports one finished call to the listener: status and outcome only, never a URL, header or body. */
  report(spec: CallSpec, result: UpstreamExchange, outcome: string): void
  /** The gateway's clock (epoch ms): a Retry-After HTTP-date is read against it, the clock the executor waits by. */
  now(): number
}

export interface ContextParts {
  readonly resource: ResourceConfig
  readonly config: HttpConnectorConfig
  readonly bases: ReadonlyMap<string, URL>
  readonly credentialHeader: readonly [string, string] | null
  readonly redact: Redactor
  readonly client: UpstreamClient
  readonly onCall?: UpstreamCallListener
  /** default: the process's clock */
  readonly clock?: () => Date
}

export function createContext(parts: ContextParts): HttpContext {
  const { config, bases, credentialHeader } = parts
  return {
    resource: parts.resource,
    config,
    sourceNames: [...bases.keys()],
    redact: parts.redact,
    baseOf(source) {
      const base = bases.get(source)
      if (!base) throw new WarrantError('invalid_request', `unknown source "${source}" (sources: ${[...bases.keys()].join(', ')})`)
      return base
    },
    send(spec) {
      const headers: Record<string, string> = { accept: 'application/json', ...spec.headers }
      if (credentialHeader) headers[credentialHeader[0]] = credentialHeader[1]
      return parts.client.send({
        url: spec.url,
        method: spec.method,
        headers,
        ...(spec.body === undefined ? {} : { body: spec.body }),
        timeoutMs: config.timeout_ms,
        maxBytes: config.max_response_bytes,
        ...(spec.signal ? { signal: spec.signal } : {}),
      })
    },
    now: () => (parts.clock ? parts.clock().getTime() : Date.now()),
    report(spec, result, outcome) {
      parts.onCall?.({
        source: spec.source,
        method: spec.method,
        endpoint: spec.endpoint,
        ...(spec.targetId === undefined ? {} : { targetId: spec.targetId }),
        ...(spec.ids === undefined ? {} : { ids: spec.ids }),
        status: answeredStatus(result) ?? null,
        outcome,
        durationMs: result.durationMs,
      })
    },
  }
}
