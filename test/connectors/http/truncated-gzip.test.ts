import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { constants, createGzip, gzipSync } from 'node:zlib'
import { createHttpConnector } from '../../../src/connectors/http/index.js'
import type { Connector, WriteOutcome } from '../../../src/connectors/connector.js'
import { httpResource } from './fixtures.js'
import { startUpstream, type TestUpstream } from './upstream-server.js'

/**
 * A gzip answer whose stream stops before its end (the trailer never sent; a compressing server that flushed
 * the whole JSON and then died before the final block) is a cut body, though the HTTP message around it is
 * whole (its Content-Length met, its chunks ended). A given fetch decompresses it leniently and handed it on
 * as the complete answer: a list page trusted, a write `written`. Neither client may: the page is not used,
 * the write's outcome cannot be verified (`unknown`, with its status).
 */
const RECORD = { id: 'x', status: 'paused', amount: 1, version: 2 }

/** The gzip of `json` without its 8-byte trailer (CRC-32 and length): every byte of JSON, no end. */
function withoutTrailer(json: string): Buffer {
  const full = gzipSync(json)
  return full.subarray(0, full.length - 8)
}

/** The gzip of `json` as a compressing server streams it: flushed, then no final block and no trailer. */
function flushedNotEnded(json: string): Promise<Buffer> {
  return new Promise((resolve) => {
    const gzip = createGzip()
    const chunks: Buffer[] = []
    gzip.on('data', (chunk: Buffer) => chunks.push(chunk))
    gzip.write(json)
    gzip.flush(constants.Z_SYNC_FLUSH, () => resolve(Buffer.concat(chunks)))
  })
}

describe('a gzip answer cut before the end of its stream', () => {
  let upstream: TestUpstream
  let mode: 'trailer' | 'flushed' = 'trailer'
  before(async () => {
    upstream = await startUpstream(async (req, res) => {
      const json = JSON.stringify(req.url.pathname === '/items' ? { items: [RECORD] } : RECORD)
      if (mode === 'trailer') {
        // the HTTP message is whole: its Content-Length is the bytes sent
        const body = withoutTrailer(json)
        res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip', 'content-length': String(body.length) })
        return res.end(body)
      }
      // chunked, its last chunk sent: whole as HTTP, cut as gzip
      res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip' })
      res.end(await flushedNotEnded(json))
    })
  })
  after(() => upstream.close())

  const clients = [
    ['node:http', {}, /^source "main" answered 200, then its gzip body was cut: the compressed stream ended before its end \(Z_BUF_ERROR\)$/],
    ['fetch', { fetch: globalThis.fetch }, /^source "main" answered 200 with a gzip body that cannot be proven whole: a given fetch decompresses it without checking the end of the compressed stream, so a body cut short would read as complete$/],
  ] as const
  for (const [name, options, says] of clients) {
    for (const cut of ['trailer', 'flushed'] as const) {
      describe(`${name}, ${cut === 'trailer' ? 'the trailer never sent' : 'flushed, never ended'}`, () => {
        const connect = (): Connector => {
          mode = cut
          return createHttpConnector({ ...options, resource: httpResource({ sources: [{ name: 'main', base_url: upstream.origin }] }) })
        }

        it('a write answered so cannot be verified: unknown, with its status, never written', async () => {
          const conn = connect()
          const outcome: WriteOutcome = await conn.write({
            id: 'x',
            expectedVersion: '1',
            set: { status: 'paused' },
            precondition: {},
            http: { method: 'PATCH', path: '/items/x', body: { status: 'paused' }, ifMatch: false },
          })
          await conn.close()
          assert.equal(outcome.kind, 'unknown', JSON.stringify(outcome))
          assert.equal(outcome.kind === 'unknown' && outcome.status, 200)
          const message = outcome.kind === 'unknown' ? outcome.message : ''
          const [answer, rest] = message.split('; ')
          assert.match(answer ?? '', says)
          assert.match(rest ?? '', /^the write reached the upstream and may have been applied, but its answer cannot be read$/)
        })

        it('a read by id and a list page are not used: failed and unavailable, with the status and why', async () => {
          const conn = connect()
          const read = await conn.readByIds(['x'])
          assert.equal(read.records.size, 0)
          assert.deepEqual(read.failed.map((f) => [f.id, f.status]), [['x', 200]])
          assert.match(read.failed[0]!.message, says)
          const session = await conn.openSession()
          const page = await session.readPage({ source: 'main', filter: {}, position: null, pageSize: 10 })
          await session.close()
          await conn.close()
          assert.equal(page.kind, 'unavailable', JSON.stringify(page))
          assert.equal(page.kind === 'unavailable' && page.status, 200)
          assert.match(page.kind === 'unavailable' ? page.message : '', says)
        })
      })
    }
  }
})
