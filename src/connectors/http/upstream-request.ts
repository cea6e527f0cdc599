/** One HTTP exchange with an upstream, as the connector sends it. */
export interface UpstreamRequest {
  readonly url: URL
  readonly method: string
  readonly headers: Readonly<Record<string, string>>
  readonly body?: string
  readonly timeoutMs: number
  readonly maxBytes: number
  readonly signal?: AbortSignal
}

/**
 * How the exchange ended, before any meaning is given to it. `too_large` means the body passed the byte
 * limit and was dropped unread: a partial body is never parsed. `body` is null when it has no text as its
 * charset declares it (see bodyText), `unreadable` saying why.
 * A `network` failure says how far the exchange got (`reach`): an upstream that answered and then cut its body
 * received the request, and a reviewer told it "could not be reached" reads that nothing was sent.
 */
export type UpstreamExchange =
  | { readonly kind: 'response'; readonly status: number; readonly headers: Headers; readonly body: string | null; readonly unreadable?: string; readonly durationMs: number }
  | { readonly kind: 'too_large'; readonly status: number; readonly durationMs: number }
  /** `connecting`: the time ran out before a new connection was made (its TCP or TLS handshake): nothing was sent */
  | { readonly kind: 'timeout'; readonly durationMs: number; readonly connecting?: true }
  | { readonly kind: 'aborted'; readonly durationMs: number }
  | { readonly kind: 'network'; readonly detail: string; readonly durationMs: number; readonly reach: NetworkReach | null }

/**
 * How far a failed exchange got: no connection was made (`connecting`: nothing was sent); the connection broke
 * while the request was being sent (`sending`); the request was sent and no answer came (`awaiting`); the
 * answer's status and headers came, then its body broke (`body`: `received` bytes as they came on the wire,
 * of `declared` by Content-Length where it says, or could not be decompressed from `undecodable`'s encoding).
 * Null where the client cannot tell (a given fetch failing before the answer).
 */
export type NetworkReach =
  | { readonly stage: 'connecting' | 'sending' | 'awaiting' }
  | {
      readonly stage: 'body'
      readonly status: number
      readonly received: number
      readonly declared: number | null
      readonly undecodable: string | null
      /** HTTP's own parser failed once the answer had begun: bytes past its Content-Length, a broken chunk */
      readonly unframed?: true
      /**
       * A compressed body whose stream did not provably end, though the HTTP message did: its end is `missing`
       * (the decoder ran out of input first: a cut body), or `unchecked` (a given fetch decompresses leniently,
       * and hands on a stream cut short as whole).
       */
      readonly compressed?: { readonly encoding: string; readonly end: 'missing' | 'unchecked' }
    }

/**
 * What sends the connector's requests: redirects are returned, never followed; the time limit covers the headers
 * and the whole body, combined with the caller's signal; the body is read up to `maxBytes` and no further.
 * `createNodeClient` (node:http, the default) or `createFetchClient` (a fetch given by the embedding application).
 */
export interface UpstreamClient {
  send(request: UpstreamRequest): Promise<UpstreamExchange>
  /** Closes idle kept-alive connections. */
  close(): void
}

/** A short, credential-free description of a network failure (`ECONNREFUSED`, `ENOTFOUND`…). */
export function networkDetail(error: unknown): string {
  const direct = (error as { code?: unknown } | null)?.code
  if (typeof direct === 'string') return direct
  const cause = (error as { cause?: { code?: unknown; message?: unknown } } | null)?.cause
  if (cause && typeof cause.code === 'string') return cause.code
  if (cause && typeof cause.message === 'string') return cause.message
  return error instanceof Error ? error.message : 'network error'
}
