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
 * limit and was dropped unread: a partial body is never parsed. `body` is null when it is not UTF-8.
 */
export type UpstreamExchange =
  | { readonly kind: 'response'; readonly status: number; readonly headers: Headers; readonly body: string | null; readonly durationMs: number }
  | { readonly kind: 'too_large'; readonly status: number; readonly durationMs: number }
  | { readonly kind: 'timeout'; readonly durationMs: number }
  | { readonly kind: 'aborted'; readonly durationMs: number }
  | { readonly kind: 'network'; readonly detail: string; readonly durationMs: number }

/**
 * Sends one request: redirects are returned, never followed; the time limit covers the headers and the whole
 * body, combined with the caller's signal; the body is read up to `maxBytes` and no further.
 */
export async function exchange(fetchImpl: typeof fetch, request: UpstreamRequest): Promise<UpstreamExchange> {
  const started = performance.now()
  const elapsed = () => Math.round(performance.now() - started)
  const timeout = AbortSignal.timeout(request.timeoutMs)
  const signal = request.signal ? AbortSignal.any([timeout, request.signal]) : timeout
  try {
    const response = await fetchImpl(request.url, {
      method: request.method,
      headers: request.headers,
      ...(request.body === undefined ? {} : { body: request.body }),
      redirect: 'manual',
      signal,
    })
    const bytes = await readBounded(response, request.maxBytes)
    if (bytes === null) return { kind: 'too_large', status: response.status, durationMs: elapsed() }
    return { kind: 'response', status: response.status, headers: response.headers, body: decodeUtf8(bytes), durationMs: elapsed() }
  } catch (error) {
    if (timeout.aborted) return { kind: 'timeout', durationMs: elapsed() }
    if (request.signal?.aborted) return { kind: 'aborted', durationMs: elapsed() }
    return { kind: 'network', detail: networkDetail(error), durationMs: elapsed() }
  }
}

/** The body's bytes, or null as soon as it passes `maxBytes` (the rest is not read). */
async function readBounded(response: Response, maxBytes: number): Promise<Uint8Array | null> {
  const declared = response.headers.get('content-length')
  if (declared !== null && response.headers.get('content-encoding') === null && Number(declared) > maxBytes) {
    await response.body?.cancel().catch(() => undefined)
    return null
  }
  if (!response.body) return new Uint8Array(0)
  const reader = response.body.getReader()
  const chunks: Uint8Array[] = []
  let total = 0
  for (;;) {
    const { done, value } = await reader.read()
    if (done) break
    total += value.byteLength
    if (total > maxBytes) {
      await reader.cancel().catch(() => undefined)
      return null
    }
    chunks.push(value)
  }
  const out = new Uint8Array(total)
  let at = 0
  for (const chunk of chunks) {
    out.set(chunk, at)
    at += chunk.byteLength
  }
  return out
}

function decodeUtf8(bytes: Uint8Array): string | null {
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes)
  } catch {
    return null
  }
}

/** A short, credential-free description of a network failure (`ECONNREFUSED`, `ENOTFOUND`…). */
function networkDetail(error: unknown): string {
  const cause = (error as { cause?: { code?: unknown; message?: unknown } } | null)?.cause
  if (cause && typeof cause.code === 'string') return cause.code
  if (cause && typeof cause.message === 'string') return cause.message
  return error instanceof Error ? error.message : 'network error'
}
