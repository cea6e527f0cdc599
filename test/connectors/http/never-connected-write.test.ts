import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { createHttpConnector } from '../../../src/connectors/http/index.js'
import type { WriteOutcome } from '../../../src/connectors/connector.js'
import { callLog, httpResource } from './fixtures.js'
import { startUpstream, type TestUpstream } from './upstream-server.js'

/**
 * A write whose connection was never made (refused, a TLS handshake that failed) sent not one byte of the
 * request: over node:http, which sees its new socket never connect, the write is `not_sent`, not `unknown`.
 * A given fetch does not say how far it got, so there it stays `unknown`.
 */
describe('a write whose connection was never made', () => {
  let refused: string
  let plain: TestUpstream
  before(async () => {
    // a port that refuses connections: a server's, closed
    const closed = await startUpstream((_req, res) => res.end())
    refused = closed.origin
    await closed.close()
    // a plain-HTTP server: a TLS ClientHello to it fails the handshake before the request is written
    plain = await startUpstream((_req, res) => res.end())
  })
  after(() => plain.close())

  const write = async (origin: string, options: { fetch?: typeof fetch } = {}) => {
    const log = callLog()
    const conn = createHttpConnector({ ...options, resource: httpResource({ sources: [{ name: 'main', base_url: origin }] }), onCall: log.onCall })
    try {
      const outcome: WriteOutcome = await conn.write({ id: 'x', expectedVersion: '1', set: { status: 'paused' }, precondition: {}, http: { method: 'PATCH', path: '/items/x', body: { status: 'paused' }, ifMatch: false } })
      return { outcome, calls: log.calls.map((c) => [c.status, c.outcome]) }
    } finally {
      await conn.close()
    }
  }

  it('node:http, connection refused: not_sent, saying the write was never sent; the call row says so', async () => {
    const { outcome, calls } = await write(refused)
    assert.deepEqual(outcome, { kind: 'not_sent', message: 'source "main" could not be reached (ECONNREFUSED); no connection was made, so the write was never sent' })
    assert.deepEqual(calls, [[null, 'not_sent']])
  })

  it('node:http, a TLS handshake that fails: not_sent, and the upstream received no request', async () => {
    const { outcome } = await write(plain.origin.replace('http:', 'https:'))
    assert.equal(outcome.kind, 'not_sent', JSON.stringify(outcome))
    assert.match(outcome.kind === 'not_sent' ? outcome.message : '', /^source "main" could not be reached \(.+\); no connection was made, so the write was never sent$/)
    assert.equal(plain.seen.length, 0)
  })

  it('a given fetch, connection refused: unknown (fetch does not say how far it got)', async () => {
    const { outcome, calls } = await write(refused, { fetch: globalThis.fetch })
    assert.equal(outcome.kind, 'unknown', JSON.stringify(outcome))
    assert.match(outcome.kind === 'unknown' ? outcome.message : '', /the write may or may not have happened/)
    assert.deepEqual(calls, [[null, 'unknown']])
  })
})
