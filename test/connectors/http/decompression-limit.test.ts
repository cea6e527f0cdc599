import assert from 'node:assert/strict'
import { once } from 'node:events'
import { PassThrough } from 'node:stream'
import { test } from 'node:test'
import { brotliCompressSync, constants, createBrotliDecompress, createGunzip, gzipSync } from 'node:zlib'
import { collectBody } from '../../../src/connectors/http/node-client.js'

/**
 * A compressed answer decoding past `max_response_bytes` is given up at the limit, and so is its decoding: 1.6 KB
 * of brotli decode to a gigabyte, and the decoder, fed before the connection was dropped, went on decoding it
 * all (1.4 s of CPU and a gigabyte of garbage per request) after the exchange had answered too_large.
 */
for (const [name, bytes, decoder] of [
  ['brotli', brotliCompressSync(Buffer.alloc(64 << 20, 32), { params: { [constants.BROTLI_PARAM_QUALITY]: 5 } }), createBrotliDecompress],
  ['gzip', gzipSync(Buffer.alloc(16 << 20, 32)), createGunzip],
] as const) {
  test(`a ${name} body decoding past the limit stops the decoder and the connection at the limit`, async () => {
    const source = new PassThrough()
    const decoding = decoder()
    const seen: string[] = []
    collectBody(source, decoding, 1 << 16, { body: () => seen.push('body'), tooLarge: () => seen.push('too_large'), error: (e) => seen.push(`error ${String(e)}`) })
    source.end(bytes)
    await once(decoding, 'close')
    assert.deepEqual(seen, ['too_large'])
    assert.equal(source.destroyed, true)
    // closed at the limit, not run to the end of what it was fed
    assert.equal(decoding.readableEnded, false, 'the decoder went on decoding to its end')
  })
}

test('a compressed body within the limit is decoded whole', async () => {
  const source = new PassThrough()
  const decoding = createGunzip()
  const body = new Promise<Buffer>((resolve, reject) => collectBody(source, decoding, 1 << 16, { body: resolve, tooLarge: () => reject(new Error('too large')), error: reject }))
  source.end(gzipSync('{"id":"r1"}'))
  assert.equal((await body).toString(), '{"id":"r1"}')
})
