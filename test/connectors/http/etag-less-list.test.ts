import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { createHttpConnector } from '../../../src/connectors/http/index.js'
import { httpResource, idsOf, walk } from './fixtures.js'
import { sendJson, startUpstream, type TestUpstream } from './upstream-server.js'

/**
 * An upstream versioned by ETag (`version.from: etag`) whose list answer carries no ETag for its items (no
 * header, no etag/_etag/version member), as GitHub's lists do; each record read alone carries one. The walk
 * read such items at version "": frozen so, every member was "changed" against the ETag read before its batch,
 * and the operation halted `membership_changed` on a record nobody touched. A record with no version is
 * counted (versionless, the walk not complete), never returned under version "".
 */
describe('http connector: an ETag-versioned list whose items carry no ETag', () => {
  const items = ['a1', 'a2', 'a3', 'a4', 'a5'].map((id) => ({ id, status: 'active', amount: 1 }))
  let tagged = new Set<string>()
  let emptyTag = false
  let upstream: TestUpstream
  before(async () => {
    upstream = await startUpstream((req, res) => {
      if (req.url.pathname === '/items') {
        const skip = Number(req.url.searchParams.get('skip') ?? 0)
        const limit = Number(req.url.searchParams.get('limit') ?? 2)
        return sendJson(res, 200, { items: items.slice(skip, skip + limit).map((i) => (tagged.has(i.id) ? { ...i, etag: `"t-${i.id}"` } : i)) })
      }
      const item = items.find((i) => i.id === req.url.pathname.slice('/items/'.length))
      if (!item) return sendJson(res, 404, {})
      return sendJson(res, 200, item, emptyTag ? {} : { etag: `"g-${item.id}"` })
    })
  })
  after(() => upstream.close())

  const connector = (version: Record<string, unknown> = { from: 'etag' }, fields: Record<string, string> = { id: 'string', status: 'string', amount: 'number' }) =>
    createHttpConnector({
      resource: httpResource(
        { sources: [{ name: 'up', base_url: upstream.origin }], version, list: { path: '/items', page_size_param: 'limit', pagination: { style: 'offset', offset_param: 'skip' }, items_path: 'items' } },
        { fields },
      ),
    })

  it('a walk returns no record at version "": the items without an ETag are counted as versionless, the others kept', async () => {
    tagged = new Set(['a2'])
    const { records, results } = await walk(connector(), 'up', 2)
    assert.deepEqual(idsOf(records), ['a2'])
    assert.equal(records[0]!.version, '"t-a2"')
    const unjudged = results.flatMap((r) => (r.kind === 'page' && r.unjudged ? [r.unjudged] : []))
    assert.equal(unjudged.reduce((n, u) => n + u.count, 0), 4)
    assert.equal(unjudged.reduce((n, u) => n + (u.versionless?.count ?? 0), 0), 4)
    assert.deepEqual([...new Set(unjudged.flatMap((u) => u.absent))], [], 'no declared field is said absent')
    // the offset walk still checks each page against the last record of the one before (a versionless one), as
    // it does when every item carries its ETag
    tagged = new Set(items.map((i) => i.id))
    const all = await walk(connector(), 'up', 2)
    assert.equal(all.records.length, 5)
    assert.deepEqual(results.map((r) => r.kind === 'page' && r.next), all.results.map((r) => r.kind === 'page' && r.next))
    assert.deepEqual(results.map((r) => r.kind === 'page' && r.unchecked), all.results.map((r) => r.kind === 'page' && r.unchecked))
  })

  it('a read by id with an ETag header is read at it; one without fails, naming the missing ETag', async () => {
    emptyTag = false
    const read = await connector().readByIds(['a1'])
    assert.equal(read.records.get('a1')?.version, '"g-a1"')
    emptyTag = true
    try {
      const without = await connector().readByIds(['a1'])
      assert.equal(without.records.size, 0)
      assert.match(without.failed[0]?.message ?? '', /no ETag header/)
    } finally {
      emptyTag = false
    }
  })

  it('a version field holding "" is no version either', async () => {
    tagged = new Set()
    const emptyVersion = createHttpConnector({
      resource: httpResource(
        { sources: [{ name: 'up', base_url: upstream.origin }], version: { from: 'field', field: 'status' }, list: { path: '/items', page_size_param: 'limit', pagination: { style: 'offset', offset_param: 'skip' }, items_path: 'items' } },
        { fields: { id: 'string', status: 'string', amount: 'number' } },
      ),
    })
    const saved = items.map((i) => i.status)
    items[0]!.status = ''
    try {
      const { records, results } = await walk(emptyVersion, 'up', 2)
      assert.ok(!records.some((r) => r.version === ''), 'no record at version ""')
      assert.deepEqual(idsOf(records), ['a2', 'a3', 'a4', 'a5'])
      const first = results[0]!
      assert.deepEqual(first.kind === 'page' ? first.unjudged?.versionless : null, { field: 'status', count: 1 })
    } finally {
      items.forEach((i, n) => (i.status = saved[n]!))
    }
  })
})
