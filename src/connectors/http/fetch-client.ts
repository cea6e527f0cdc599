import { textOf } from './body-text.js'
import { networkDetail, type UpstreamClient, type UpstreamExchange, type UpstreamRequest } from './upstream-request.js'

/** The codes zlib (`Z_DATA_ERROR`, `Z_BUF_ERROR`) and brotli (`ERR__ERROR_FORMAT_PADDING_2`) fail with. */
const DECODER_CODE = /^(Z_[A-Z_]+|ERR__ERROR_[A-Z0-9_]+)$/

/**
 * An upstream client over a fetch the embedding application gives (`createHttpConnector({ fetch })`, e.g. one
 * with a proxy dispatcher). The default client is `createNodeClient`: Node 20's fetch costs several times its
 * CPU per request.
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
      headers: request.headers,
      ...(request.body === undefined ? {} : { body: request.body }),
      redirect: 'manual',
      signal,
    })
    const count = { received: 0 }
    try {
      const bytes = await readBounded(response, request.maxBytes, count)
      if (bytes === null) return { kind: 'too_large', status: response.status, durationMs: elapsed() }
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
