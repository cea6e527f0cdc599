import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { createHttpConnector } from '../../../src/connectors/http/index.js'
import { httpResource } from './fixtures.js'
import { startRawJsonUpstream, type TestUpstream } from './upstream-server.js'

/**
 * An upstream body naming one key twice in an object (`{"id":"r1","id":"r2"}`): JSON.parse keeps the last, the
 * upstream's own parser, a proxy or a log may keep the first, so which value the upstream means cannot be told.
 * Before, the last one was taken as the truth: a page whose cursor was `"x"` then `null` ended the walk
 * complete, a record whose status was `past_due` then `active` was answered `active`, and `r1`/`r2` was `r2`.
 */
const PAGES: Record<string, string> = {
  // the cursor named twice: more follow, or the end?
  cursor: '{"items":[{"id":"r1","status":"active","amount":1,"version":1}],"next_cursor":"p2","next_cursor":null}',
  // the second record names its status twice, the third its id: each is unjudged, the first is answered
  records:
    '{"items":[{"id":"r1","status":"active","amount":1,"version":1},{"id":"r2","status":"past_due","amount":2,"version":1,"status":"active"},{"id":"r3","id":"r4","status":"active","amount":3,"version":1},{"id":"r5","status":"active","amount":5,"version":1,"note":{"a":1,"a":2}}],"next_cursor":null}',
}
const BY_ID: Record<string, string> = {
  r1: '{"id":"r1","status":"active","amount":1,"version":1}',
  r2: '{"id":"r2","status":"past_due","amount":2,"version":1,"status":"active"}',
}

describe('http connector: a key named twice in one object of an upstream body', () => {
  let upstream: TestUpstream
  before(async () => {
    upstream = await startRawJsonUpstream((req) => {
      const [, first, second] = req.url.pathname.split('/')
      return first === 'items' ? (BY_ID[second!] ?? '{}') : PAGES[first!]!
    })
  })
  after(() => upstream.close())

  const connector = (list: string) =>
    createHttpConnector({ resource: httpResource({ sources: [{ name: 'm', base_url: upstream.origin }], list: { path: `/${list}`, items_path: 'items', page_size_param: 'limit' } }) })
  const firstPage = async (list: string, filter = {}) => {
    const session = await connector(list).openSession()
    try {
      return await session.readPage({ source: 'm', filter, position: null, pageSize: 10 })
    } finally {
      await session.close()
    }
  }

  it('a paging signal named twice refuses the page, naming the key and where', async () => {
    const page = await firstPage('cursor')
    assert.equal(page.kind, 'refused', JSON.stringify(page))
    assert.match(page.kind === 'refused' ? page.message : '', /"next_cursor" twice/)
  })

  it('a record naming a declared field or its id twice is counted unjudged, naming the field; a key named twice outside the declared fields leaves it judged', async () => {
    const page = await firstPage('records', { status: 'active' })
    assert.equal(page.kind, 'page', JSON.stringify(page))
    if (page.kind !== 'page') return
    assert.deepEqual(
      page.items.map((r) => r.id),
      ['r1', 'r5'],
    )
    assert.deepEqual(page.unjudged, { count: 2, absent: [], mistyped: ['id', 'status'] })
  })

  it('a read by id of a record naming a key twice fails and says which', async () => {
    const read = await connector('records').readByIds(['r1', 'r2'])
    assert.deepEqual([...read.records.keys()], ['r1'])
    assert.deepEqual(
      read.failed.map((f) => f.id),
      ['r2'],
    )
    assert.match(read.failed[0]!.message, /"status" twice/)
  })
})
