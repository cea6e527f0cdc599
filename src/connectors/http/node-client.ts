import http, { type IncomingMessage } from 'node:http'
import https from 'node:https'
import type { Readable, Transform } from 'node:stream'
import zlib from 'node:zlib'
import { textOf } from './body-text.js'
import { networkDetail, type NetworkReach, type UpstreamClient, type UpstreamExchange, type UpstreamRequest } from './upstream-request.js'

/**
 * The connector's default upstream client, on node:http and node:https with kept-alive connections (one agent
 * each per connector, closed with it). Node 20's fetch spends several times the CPU per request (web streams,
 * Request and Response objects); an operation sends one request per target.
 *
 * Nothing is followed or retried: a redirect is an answer like any other; a connection that fails is a
 * `network` exchange, saying how far it got (never connected, sending, sent, or answered and then its body
 * cut). A compressed body is decompressed, and `maxBytes` bounds what it decompresses to.
 *
 * @example
 * const client = createNodeClient()
 * const answer = await client.send({ url: new URL('http://127.0.0.1:4060/items'), method: 'GET', headers: {}, timeoutMs: 5000, maxBytes: 1 << 20 })
 * client.close()
 */
export function createNodeClient(): UpstreamClient {
  const agents = { http: new http.Agent({ keepAlive: true }), https: new https.Agent({ keepAlive: true }) }
  return {
    send: (request) => exchange(agents, request),
    close: () => {
      agents.http.destroy()
      agents.https.destroy()
    },
  }
}

function exchange(agents: { readonly http: http.Agent; readonly https: https.Agent }, request: UpstreamRequest): Promise<UpstreamExchange> {
  const started = performance.now()
  const elapsed = () => Math.round(performance.now() - started)
  return new Promise<UpstreamExchange>((resolve) => {
    if (request.signal?.aborted) return resolve({ kind: 'aborted', durationMs: elapsed() })
    const secure = request.url.protocol === 'https:'
    const headers: Record<string, string> = { ...request.headers }
    const named = new Set(Object.keys(headers).map((name) => name.toLowerCase()))
    if (!named.has('user-agent')) headers['user-agent'] = 'warrant'
    // as fetch asks: a list page from a remote API travels compressed, and is decompressed under maxBytes
    if (!named.has('accept-encoding')) headers['accept-encoding'] = 'gzip, deflate, br'
    if (request.body !== undefined) headers['content-length'] = String(Buffer.byteLength(request.body))
    const req = (secure ? https : http).request({
      protocol: request.url.protocol,
      // URL keeps an IPv6 literal in brackets; the socket wants the address
      hostname: request.url.hostname.replace(/^\[(.*)\]$/, '$1'),
      port: request.url.port === '' ? undefined : Number(request.url.port),
      path: `${request.url.pathname}${request.url.search}`,
      method: request.method,
      headers,
      agent: secure ? agents.https : agents.http,
    })
    let cause: 'timeout' | 'aborted' | null = null
    let settled = false
    // how far the request got, for a failure before the answer: connected (TLS done), then wholly written
    let stage: 'connecting' | 'sending' | 'awaiting' = 'connecting'
    // a TLS socket takes the request into its buffer before the handshake, and says it is written ('finish'):
    // it is on its way only once the connection is made, so a failed handshake still sent nothing
    let written = false
    const finish = (result: UpstreamExchange) => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      request.signal?.removeEventListener('abort', onAbort)
      resolve(result)
    }
    const fail = (error: unknown, reach: NetworkReach = { stage }) => {
      // a time limit that ran out before the connection was made: the request is still in the socket's buffer, unsent
      if (cause === 'timeout') finish({ kind: 'timeout', durationMs: elapsed(), ...(reach.stage === 'connecting' ? { connecting: true as const } : {}) })
      else if (cause === 'aborted') finish({ kind: 'aborted', durationMs: elapsed() })
      else finish({ kind: 'network', detail: networkDetail(error), durationMs: elapsed(), reach })
    }
    const stop = (why: 'timeout' | 'aborted') => {
      cause ??= why
      req.destroy()
    }
    // the limit covers the answer's headers and its whole body
    const timer = setTimeout(() => stop('timeout'), request.timeoutMs)
    const onAbort = () => stop('aborted')
    request.signal?.addEventListener('abort', onAbort, { once: true })
    // once the answer has begun, an error of the request is HTTP's parser failing on its bytes: the upstream answered
    let framing: ((error: unknown) => void) | null = null
    req.on('error', (error) => (framing ?? fail)(error))
    req.on('socket', (socket) => {
      const connected = () => {
        if (stage === 'connecting') stage = written ? 'awaiting' : 'sending'
      }
      // a kept-alive socket is connected already; a new one is once its TCP (and TLS) handshake is done
      if (!socket.connecting) connected()
      else socket.once(secure ? 'secureConnect' : 'connect', connected)
    })
    req.on('finish', () => {
      written = true
      if (stage === 'sending') stage = 'awaiting'
    })
    req.on('response', (res) => {
      framing = read(res, request.maxBytes, finish, fail, elapsed)
    })
    req.end(request.body)
  })
}

/**
 * Reads an answer's body up to `maxBytes` (after decompression); past it, the connection is dropped unread. A
 * failure from here on is the answer's (`reach` stage `body`): the upstream received the request and answered.
 * Returns how a parser error the request reports from now on fails the exchange.
 */
function read(
  res: IncomingMessage,
  maxBytes: number,
  finish: (result: UpstreamExchange) => void,
  fail: (error: unknown, reach: NetworkReach) => void,
  elapsed: () => number,
): (error: unknown) => void {
  const status = res.statusCode ?? 0
  const tooLarge = () => finish({ kind: 'too_large', status, durationMs: elapsed() })
  const encoding = (res.headers['content-encoding'] ?? 'identity').trim().toLowerCase()
  const length = res.headers['content-length']
  const declared = length !== undefined && /^\d+$/.test(length) ? Number(length) : null
  let received = 0
  const cut = (error: unknown) => fail(error, { stage: 'body', status, received, declared, undecodable: null })
  const unframed = (error: unknown) => fail(error, { stage: 'body', status, received, declared, undecodable: null, unframed: true })
  // zlib and brotli fail with Z_BUF_ERROR only where their input ended before the compressed stream did (a
  // trailer never sent, a server that flushed and died): the HTTP message was whole, the body is cut all the same
  const undecodable = (error: unknown) =>
    fail(error, (error as { code?: unknown }).code === 'Z_BUF_ERROR' ? { stage: 'body', status, received, declared, undecodable: null, compressed: { encoding, end: 'missing' } } : { stage: 'body', status, received, declared, undecodable: encoding })
  res.on('error', cut)
  // a connection that closes before the body is whole (a reset, a body cut under its Content-Length)
  res.on('close', () => {
    if (!res.complete) cut(new Error('the connection closed before the answer was complete'))
  })
  if (encoding === 'identity' && declared !== null && declared > maxBytes) {
    tooLarge()
    res.destroy()
    return unframed
  }
  const decoder = encoding === 'identity' ? null : decoderFor(encoding)
  if (encoding !== 'identity' && decoder === null) {
    undecodable(new Error('an encoding Warrant does not decode'))
    res.destroy()
    return unframed
  }
  collectBody(res, decoder, maxBytes, {
    body: (bytes) => finish({ kind: 'response', status, headers: headersOf(res.rawHeaders), ...textOf(bytes, res.headers['content-type']), durationMs: elapsed() }),
    tooLarge,
    error: cut,
    undecodable,
    received: (bytes) => {
      received += bytes
    },
  })
  return unframed
}

/**
 * The body of `source`, through `decoder` when it is compressed, up to `maxBytes` of decoded bytes. Past them
 * both streams are destroyed: the decoder holds input already received, and a few kilobytes of brotli decode
 * to a gigabyte, which it went on decoding (and the gateway's CPU with it) after the answer was given up.
 * `received` counts the bytes as they come from `source`; `undecodable` is the decoder's failure.
 */
export function collectBody(
  source: Readable,
  decoder: Transform | null,
  maxBytes: number,
  on: {
    readonly body: (bytes: Buffer) => void
    readonly tooLarge: () => void
    readonly error: (error: unknown) => void
    readonly undecodable?: (error: unknown) => void
    readonly received?: (bytes: number) => void
  },
): void {
  const counted = on.received
  if (counted) source.on('data', (chunk: Buffer) => counted(chunk.length))
  let body: Readable = source
  if (decoder !== null) {
    decoder.on('error', on.undecodable ?? on.error)
    body = source.pipe(decoder)
  }
  const chunks: Buffer[] = []
  let total = 0
  let over = false
  body.on('data', (chunk: Buffer) => {
    if (over) return
    total += chunk.length
    if (total <= maxBytes) return void chunks.push(chunk)
    over = true
    on.tooLarge()
    source.destroy()
    decoder?.destroy()
  })
  body.on('end', () => {
    if (!over) on.body(Buffer.concat(chunks, total))
  })
}

function decoderFor(encoding: string): zlib.Gunzip | zlib.Inflate | zlib.BrotliDecompress | null {
  if (encoding === 'gzip' || encoding === 'x-gzip') return zlib.createGunzip()
  if (encoding === 'deflate') return zlib.createInflate()
  if (encoding === 'br') return zlib.createBrotliDecompress()
  return null
}

/** The answer's headers as the connector reads them (`get('etag')`), repeated ones joined as fetch joins them. */
function headersOf(raw: readonly string[]): Headers {
  const headers = new Headers()
  for (let i = 0; i + 1 < raw.length; i += 2) {
    try {
      headers.append(raw[i]!, raw[i + 1]!)
    } catch {
      // a header fetch would have refused to carry: it is not read
    }
  }
  return headers
}
