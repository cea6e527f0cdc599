import { textOf } from './body-text.js'
import { networkDetail, type UpstreamClient, type UpstreamExchange, type UpstreamRequest } from './upstream-request.js'

/** The codes zlib (`Z_DATA_ERROR`, `Z_BUF_ERROR`) and brotli (`ERR__ERROR_FORMAT_PADDING_2`) fail with. */
const DECODER_CODE = /^(Z_[A-Z_]+|ERR__ERROR_[A-Z0-9_]+)$/

/**
 * An upstream client over a fetch the embedding application gives (`createHttpConnector({ fetch })`, e.g. one
 * with a proxy dispatcher). The default client is `createNodeClient`: Node 20's fetch costs several times its
 * CPU per request. It asks for uncompressed answers; a compressed one all the same is not used, as it cannot be
 * proven whole (a network failure of the body, its status kept: a read is not trusted, a write is unknown).
 */
export function createFetchClient(fetchImpl: typeof fetch): UpstreamClient {
  return { send: (request) => exchange(fetchImpl, request), close: () => undefined }
}

async function exchange(fetchImpl: typeof fetch, request: UpstreamRequest): Promise<UpstreamExchange> {
  const started = performance.now()
  const elapsed = () => Math.round(performance.now() - started)
  const timeout = AbortSignal.timeout(request.timeoutMs)
  const signal = request.signal ? AbortSignal.any([timeout, request.signal]) : timeout
  try {
    const response = await fetchImpl(request.url, {
      method: request.method,
      headers: withIdentity(request.headers),
      ...(request.body === undefined ? {} : { body: request.body }),
      redirect: 'manual',
      signal,
    })
    const count = { received: 0 }
    try {
      const bytes = await readBounded(response, request.maxBytes, count)
      if (bytes === null) return { kind: 'too_large', status: response.status, durationMs: elapsed() }
      const encoding = response.headers.get('content-encoding')?.trim().toLowerCase() ?? 'identity'
      if (encoding !== 'identity') {
        const reach = { stage: 'body', status: response.status, received: count.received, declared: null, undecodable: null, compressed: { encoding, end: 'unchecked' } } as const
        return { kind: 'network', detail: `content-encoding ${encoding}`, durationMs: elapsed(), reach }
      }
      return { kind: 'response', status: response.status, headers: response.headers, ...textOf(bytes, response.headers.get('content-type')), durationMs: elapsed() }
    } catch (error) {
      // the answer came, then its body broke: the upstream received the request (fetch counts decompressed
      // bytes, and a body it cannot decompress fails with zlib's or brotli's code)
      if (timeout.aborted || request.signal?.aborted) throw error
      const detail = networkDetail(error)
      const encoding = response.headers.get('content-encoding')?.trim().toLowerCase() ?? null
      const length = response.headers.get('content-length')
      const declared = length !== null && /^\d+$/.test(length) && encoding === null ? Number(length) : null
      const undecodable = encoding !== null && DECODER_CODE.test(detail) ? encoding : null
      return { kind: 'network', detail, durationMs: elapsed(), reach: { stage: 'body', status: response.status, received: count.received, declared, undecodable } }
    }
  } catch (error) {
    if (timeout.aborted) return { kind: 'timeout', durationMs: elapsed() }
    if (request.signal?.aborted) return { kind: 'aborted', durationMs: elapsed() }
    // fetch does not say whether the connection was made or the request sent
    return { kind: 'network', detail: networkDetail(error), durationMs: elapsed(), reach: null }
  }
}

/**
 * The request's headers, asking for an uncompressed answer unless they ask otherwise: fetch decompresses with a
 * flush that takes a gzip, deflate or brotli stream cut before its end as complete, and gives no way to read the
 * compressed bytes, so only an uncompressed body can be checked whole (see `exchange`).
 */
function withIdentity(headers: Readonly<Record<string, string>>): Record<string, string> {
  return Object.keys(headers).some((name) => name.toLowerCase() === 'accept-encoding') ? { ...headers } : { ...headers, 'accept-encoding': 'identity' }
}

/** The body's bytes, or null as soon as it passes `maxBytes` (the rest is not read); `count.received` so far. */
async function readBounded(response: Response, maxBytes: number, count: { received: number }): Promise<Uint8Array | null> {
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
    count.received = total
    if (total > maxBytes) {
      await reader.cancel().catch(() => undefined)
      return null
    }
    chunks.push(value)
  }
  return Buffer.concat(chunks, total)
}
