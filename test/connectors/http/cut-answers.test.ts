import assert from 'node:assert/strict'
import type { ServerResponse } from 'node:http'
import { after, before, describe, it } from 'node:test'
import { gzipSync } from 'node:zlib'
import { createHttpConnector } from '../../../src/connectors/http/index.js'
import type { Connector, WriteOutcome } from '../../../src/connectors/connector.js'
import { callLog, httpResource } from './fixtures.js'
import { startUpstream, type TestUpstream } from './upstream-server.js'

/**
 * An upstream that answers a status and then cuts its body (a reset under its Content-Length, a chunked body that
 * stops) or sends one that cannot be decompressed received the request and answered: the failure says so, with
 * the status, and a write is `unknown` as having reached the upstream. It said "could not be reached
 * (ECONNRESET)" and lost the status, which a reviewer reads as "nothing was sent".
 */
const RECORD = JSON.stringify({ id: 'x', status: 'paused', amount: 1, version: 2 })

/** Sends the status, headers and `part`, and resets the connection once they are on the wire. */
function cutAfter(res: ServerResponse, headers: Record<string, string>, part: string): void {
  res.writeHead(200, { 'content-type': 'application/json', ...headers })
  res.write(part, () => setTimeout(() => res.destroy(), 20))
}

describe('an answer whose body is cut or cannot be decoded', () => {
  let upstream: TestUpstream
  before(async () => {
    upstream = await startUpstream((req, res) => {
      const id = req.url.pathname.split('/').pop()
      if (req.url.pathname === '/items') return cutAfter(res, {}, '{"items":[{"id":"r1"')
      switch (id) {
        case 'cut':
          return cutAfter(res, { 'content-length': '100' }, RECORD.slice(0, 10))
        case 'chunked':
          return cutAfter(res, {}, RECORD.slice(0, 12))
        case 'gzip':
          res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip' })
          // a gzip header, then bytes that are no deflate stream
          return res.end(Buffer.concat([gzipSync(RECORD).subarray(0, 10), Buffer.alloc(40, 0xff)]))
        case 'silent':
          // the request was received whole; the connection closes without a byte of answer
          return res.socket?.destroy()
      }
      res.writeHead(404)
      res.end()
    })
  })
  after(() => upstream.close())

  const clients = [
    ['node:http', {}],
    ['fetch', { fetch: globalThis.fetch }],
  ] as const
  for (const [name, options] of clients) {
    describe(name, () => {
      const make = () => {
        const log = callLog()
        const conn = createHttpConnector({ ...options, resource: httpResource({ sources: [{ name: 'main', base_url: upstream.origin }] }), onCall: log.onCall })
        return { conn, calls: log.calls }
      }
      const write = (conn: Connector, id: string): Promise<WriteOutcome> =>
        conn.write({ id, expectedVersion: '1', set: { status: 'paused' }, precondition: {}, http: { method: 'PATCH', path: `/items/${id}`, body: { status: 'paused' }, ifMatch: false } })

      it('a write answered 200 whose body is cut under its Content-Length: unknown, status 200, the cut named, the write said to have reached the upstream', async () => {
        const { conn, calls } = make()
        const outcome = await write(conn, 'cut')
        assert.equal(outcome.kind, 'unknown')
        assert.equal(outcome.kind === 'unknown' && outcome.status, 200)
        const message = outcome.kind === 'unknown' ? outcome.message : ''
        assert.match(message, /^source "main" answered 200, then its body was cut after 10 bytes of the 100 its Content-Length declared \(\w+\); the write reached the upstream and may have been applied/)
        assert.doesNotMatch(message, /could not be reached/)
        assert.deepEqual(
          calls.map((c) => [c.status, c.outcome]),
          [[200, 'unknown']],
        )
        await conn.close()
      })

      it('a chunked body that stops, and a gzip body that cannot be decoded: the status and what broke', async () => {
        const { conn } = make()
        const chunked = await write(conn, 'chunked')
        assert.deepEqual([chunked.kind, chunked.kind === 'unknown' && chunked.status], ['unknown', 200])
        assert.match(chunked.kind === 'unknown' ? chunked.message : '', /^source "main" answered 200, then its body was cut after 12 bytes \(\w+\); the write reached the upstream/)
        const gzip = await write(conn, 'gzip')
        assert.deepEqual([gzip.kind, gzip.kind === 'unknown' && gzip.status], ['unknown', 200])
        assert.match(gzip.kind === 'unknown' ? gzip.message : '', /^source "main" answered 200 with a gzip body that could not be decoded \(Z_\w+\); the write reached the upstream/)
        await conn.close()
      })

      it('a read by id and a list page cut after their 200 say so, with the status', async () => {
        const { conn } = make()
        const read = await conn.readByIds(['cut'])
        assert.deepEqual(read.failed, [{ id: 'cut', status: 200, message: read.failed[0]?.message }])
        assert.match(read.failed[0]!.message, /^source "main" answered 200, then its body was cut after 10 bytes of the 100/)
        const session = await conn.openSession()
        const page = await session.readPage({ source: 'main', filter: {}, position: null, pageSize: 10 })
        await session.close()
        assert.equal(page.kind, 'unavailable')
        assert.equal(page.kind === 'unavailable' && page.status, 200)
        assert.match(page.kind === 'unavailable' ? page.message : '', /^source "main" answered 200, then its body was cut after 20 bytes \(\w+\)$/)
        await conn.close()
      })
    })
  }

  it('node:http: a request received and never answered is not "could not be reached"; a refused connection is', async () => {
    const conn = createHttpConnector({ resource: httpResource({ sources: [{ name: 'main', base_url: upstream.origin }] }) })
    const silent = await conn.write({ id: 'silent', expectedVersion: '1', set: { status: 'paused' }, precondition: {}, http: { method: 'PATCH', path: '/items/silent', body: { status: 'paused' }, ifMatch: false } })
    assert.equal(silent.kind, 'unknown')
    assert.match(silent.kind === 'unknown' ? silent.message : '', /^source "main" closed the connection after the request was sent, before answering \(ECONNRESET\); the write may or may not have happened$/)
    await conn.close()
    const closed = await startUpstream(() => undefined)
    await closed.close()
    const refused = createHttpConnector({ resource: httpResource({ sources: [{ name: 'main', base_url: closed.origin }] }) })
    const read = await refused.readByIds(['x'])
    assert.deepEqual(read.failed, [{ id: 'x', message: 'source "main" could not be reached (ECONNREFUSED)' }])
    await refused.close()
  })
})
