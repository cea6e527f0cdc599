import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { createHttpConnector } from '../../../src/connectors/http/index.js'
import { httpResource, idsOf, walk } from './fixtures.js'
import { startRawJsonUpstream, type TestUpstream } from './upstream-server.js'

/**
 * An upstream versioned by ETag (`version.from: etag`) that sends no ETag header on its list and writes each
 * item's version as an undeclared JSON number member, a counter past 2^53. JSON.parse reads 9007199254740995
 * as 9007199254740996: frozen so, the version was one the record never had, and the If-Match sent with it
 * would match the record's NEXT version, a change the plan never saw. Such a record has no usable version: it
 * is counted unjudged on a walk (the list not complete) and fails a read by id; the exact number still serves.
 */
const ITEMS: Record<string, string> = {
  k1: '{"key":"k1","state":"open","version":9007199254740995}',
  k2: '{"key":"k2","state":"open","version":9007199254740991}',
}

describe('http connector: a version member past 2^53 (version from etag, no ETag header)', () => {
  let upstream: TestUpstream
  before(async () => {
    upstream = await startRawJsonUpstream((req) => {
      if (req.url.pathname === '/v2/things') return `{"data":{"rows":[${Object.values(ITEMS).join(',')}]},"after":null}`
      return ITEMS[req.url.pathname.slice('/v2/things/'.length)] ?? '{}'
    })
  })
  after(() => upstream.close())

  const connector = () =>
    createHttpConnector({
      resource: httpResource(
        {
          sources: [{ name: 'east', base_url: upstream.origin }],
          get: { path: '/v2/things/{id}' },
          version: { from: 'etag' },
          field_paths: { id: 'key' },
          list: { path: '/v2/things', items_path: 'data.rows', pagination: { style: 'cursor', param: 'after', next_cursor_path: 'after' } },
        },
        { fields: { id: 'string', state: 'string' } },
      ),
    })

  it('a walk counts the record whose version member JSON rounded as unjudged, never freezes the rounded version', async () => {
    const { records, results } = await walk(connector(), 'east', 10)
    assert.deepEqual(idsOf(records), ['k2'])
    assert.equal(records[0]!.version, '9007199254740991')
    assert.ok(!records.some((r) => r.version === '9007199254740996'), 'no record under a version it never had')
    const page = results[0]!
    assert.equal(page.kind, 'page')
    assert.equal(page.kind === 'page' ? page.unjudged?.count : undefined, 1)
  })

  it('a read by id of that record fails and says why', async () => {
    const read = await connector().readByIds(['k1', 'k2'])
    assert.deepEqual([...read.records.keys()], ['k2'])
    assert.deepEqual(read.failed.map((f) => f.id), ['k1'])
    assert.match(read.failed[0]!.message, /2\^53/)
  })
})
