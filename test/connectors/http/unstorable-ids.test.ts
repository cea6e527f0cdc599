import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import type { ServerResponse } from 'node:http'
import { createHttpConnector } from '../../../src/connectors/http/index.js'
import { httpResource, idsOf, walk } from './fixtures.js'
import { startUpstream, type TestUpstream } from './upstream-server.js'

/** Items as the upstream writes them: `\ud800` and `\u0000` are JSON escapes, so the parsed ids hold them. */
const LIST = ['{"id":"a","status":"s","version":"1"}', '{"id":"b\\ud800","status":"s","version":"1"}', '{"id":"c","status":"s","version":"1\\u0000"}', '{"id":"d","status":"s","version":"1"}', '{"id":"e\\u0000","status":"s","version":"1"}']

/** What a read by id answers, by the path's id: a record whose version, or whose id, no store keeps exactly. */
const BY_ID: Record<string, string> = {
  x: '{"id":"x","status":"s","version":"1\\u0000"}',
  y: '{"id":"y\\u0000","status":"s","version":"1"}',
  z: '{"id":"z","status":"s","version":"2"}',
}

/**
 * An id or version holding a lone UTF-16 surrogate or a NUL is no key a store keeps exactly as given (SQLite
 * reads a lone surrogate back as U+FFFD, PostgreSQL refuses both). The connector counts such a record as
 * unjudged, naming the field (as it does an id JSON rounded), so it never reaches a selection, a search answer
 * or an operation's ledger as if it were the upstream's id.
 */
describe('http connector: ids and versions no store keeps exactly', () => {
  let upstream: TestUpstream
  const sendRaw = (res: ServerResponse, status: number, text: string) => {
    res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) })
    res.end(text)
  }
  before(async () => {
    upstream = await startUpstream((req, res) => {
      if (req.url.pathname === '/items') {
        const skip = Number(req.url.searchParams.get('skip') ?? 0)
        const limit = Number(req.url.searchParams.get('limit') ?? 2)
        return sendRaw(res, 200, `{"items":[${LIST.slice(skip, skip + limit).join(',')}]}`)
      }
      const id = decodeURIComponent(req.url.pathname.slice('/items/'.length))
      // a write is answered with a record whose version holds a NUL; a read after it with a usable one
      if (req.method === 'PATCH') return sendRaw(res, 200, '{"id":"z","status":"paused","version":"3\\u0000"}')
      return BY_ID[id] ? sendRaw(res, 200, BY_ID[id]) : sendRaw(res, 404, '{"error":"not_found"}')
    })
  })
  after(() => upstream.close())

  const connector = () =>
    createHttpConnector({
      resource: httpResource(
        { sources: [{ name: 'up', base_url: upstream.origin }], list: { path: '/items', page_size_param: 'limit', pagination: { style: 'offset', offset_param: 'skip' }, items_path: 'items' } },
        {
          fields: { id: 'string', status: 'string', version: 'string' },
          actions: { pause: { set: { status: 'paused' }, write: { method: 'PATCH', path: '/items/{id}', body: { status: '{{set.status}}' } } } },
        },
      ),
    })

  it('a walk leaves out, and counts, the records whose id or version holds a lone surrogate or a NUL', async () => {
    // pages of two overlap by one record: the page after "b\ud800" re-reads it and must know it again
    const { records, results } = await walk(connector(), 'up', 2)
    assert.deepEqual(idsOf(records), ['a', 'd'])
    const unjudged = results.flatMap((r) => (r.kind === 'page' && r.unjudged ? [r.unjudged] : []))
    assert.deepEqual(unjudged, [
      { count: 1, absent: [], mistyped: ['id'] },
      { count: 1, absent: [], mistyped: ['version'] },
      { count: 1, absent: [], mistyped: ['id'] },
    ])
  })

  it('a read by id of such a record fails and says why; the message holds the id as JSON', async () => {
    const read = await connector().readByIds(['x', 'y', 'z'])
    assert.deepEqual([...read.records.keys()], ['z'])
    assert.deepEqual(read.missing, [])
    const byId = new Map(read.failed.map((f) => [f.id, f.message]))
    assert.match(byId.get('x')!, /"version" as another type than string \(or as text holding a NUL or an unpaired UTF-16 surrogate/)
    assert.match(byId.get('y')!, /record "y\\u0000" carries "id"/)
    for (const message of byId.values()) assert.ok(!message.includes('\0'), 'no NUL reaches a message a store keeps')
  })

  it('a write answered with a version no store keeps carries no record: the caller re-reads it', async () => {
    const outcome = await connector().write({ id: 'z', expectedVersion: '2', set: { status: 'paused' }, precondition: {}, http: { method: 'PATCH', path: '/items/z', body: { status: 'paused' }, ifMatch: true } })
    assert.equal(outcome.kind, 'written')
    assert.equal(outcome.kind === 'written' ? outcome.record : undefined, null)
  })
})
