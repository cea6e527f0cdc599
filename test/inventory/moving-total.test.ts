import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { createHttpConnector } from '../../src/connectors/http/index.js'
import { searchAll } from '../../src/inventory/index.js'
import { collection, httpResource, type Item } from '../connectors/http/fixtures.js'
import { sendJson, startUpstream, type TestUpstream } from '../connectors/http/upstream-server.js'
import { TEST_SCOPE, testCodec } from './helpers.js'

/**
 * Page numbers (and opaque cursors and links) carry no proof of where the walk stands: a record deleted from a page
 * already read shifts the next one onto that page, never read. The upstream's own count of matches going from 12 to
 * 11 between pages is the data moving under the walk, seen: the walk restarts the source (within one call), or ends
 * with SNAPSHOT_INVALIDATED. It was: r006 (there throughout) missing, 11 records found for a total of 11, complete.
 */
describe('a total that changes between pages of a page-number walk', () => {
  let items: Item[] = []
  /** Before the n-th list read (1-based) the first record is deleted; every read when `always`. */
  let deleteBefore = new Set<number>()
  /** Before the n-th list read, this change to the list. */
  let moveBefore = new Map<number, () => void>()
  let reads = 0
  let upstream: TestUpstream
  before(async () => {
    upstream = await startUpstream((req, res) => {
      reads += 1
      if (deleteBefore.has(reads)) items = items.slice(1)
      moveBefore.get(reads)?.()
      const size = Number(req.url.searchParams.get('limit') ?? 5)
      if (req.url.searchParams.has('offset')) {
        const offset = Number(req.url.searchParams.get('offset'))
        return sendJson(res, 200, { results: items.slice(offset, offset + size), total: items.length })
      }
      if (req.url.pathname === '/cursored') {
        // an opaque cursor that is an offset in disguise, as many are
        const at = Number(Buffer.from(req.url.searchParams.get('cursor') ?? 'MA', 'base64url').toString())
        const next = at + size < items.length ? Buffer.from(String(at + size)).toString('base64url') : null
        return sendJson(res, 200, { results: items.slice(at, at + size), total: items.length, next_cursor: next })
      }
      const page = Number(req.url.searchParams.get('page') ?? 1)
      sendJson(res, 200, { results: items.slice((page - 1) * size, page * size), total: items.length })
    })
  })
  after(() => upstream?.close())

  const search = (pagination: Record<string, unknown>) => {
    const connector = createHttpConnector({
      resource: httpResource({ sources: [{ name: 'main', base_url: upstream.origin }], list: { path: '/items', items_path: 'results', total_path: 'total', page_size_param: 'limit', pagination } }),
    })
    return searchAll(connector, { resource: 'items', filter: {}, pageSize: 5 }, {}, { scope: TEST_SCOPE, cursorCodec: testCodec() })
  }
  const reset = (deleted: number[]) => {
    items = collection(12)
    reads = 0
    deleteBefore = new Set(deleted)
    moveBefore = new Map()
  }

  it('moved once (r001 deleted after page 1 was read): the source is read again, and every record there throughout is found', async () => {
    // read 1: page 1; read 2: page 0 (the origin probe); read 3: page 2, after r001 went
    reset([3])
    const envelope = await search({ style: 'page', param: 'page', first: 1 })
    const ids = envelope.items.map((r) => r.id)
    for (const item of collection(12).slice(1)) assert.ok(ids.includes(item.id), `${item.id} existed throughout and is missing: ${ids.join(',')} (complete: ${envelope.complete})`)
    assert.equal(new Set(ids).size, ids.length)
    assert.equal(envelope.complete, true, JSON.stringify(envelope.incomplete_reasons))
  })

  it('an opaque cursor (an offset inside): r001 deleted after the first page, the source is read again', async () => {
    reset([2])
    const connector = createHttpConnector({
      resource: httpResource({ sources: [{ name: 'main', base_url: upstream.origin }], list: { path: '/cursored', items_path: 'results', total_path: 'total', page_size_param: 'limit', pagination: { style: 'cursor' } } }),
    })
    const envelope = await searchAll(connector, { resource: 'items', filter: {}, pageSize: 5 }, {}, { scope: TEST_SCOPE, cursorCodec: testCodec() })
    const ids = envelope.items.map((r) => r.id)
    assert.ok(ids.includes('r006'), `r006 existed throughout and is missing: ${ids.join(',')} (complete: ${envelope.complete})`)
    assert.equal(envelope.complete, true, JSON.stringify(envelope.incomplete_reasons))
  })

  it('continued over calls (one page each): a total moved before the second call ends the walk SNAPSHOT_INVALIDATED, since the first part went out', async () => {
    // read 1: page 1, read 2: page 0 (the origin probe); the second call reads page 2 after r001 went
    reset([3])
    const connector = createHttpConnector({
      resource: httpResource({ sources: [{ name: 'main', base_url: upstream.origin }], list: { path: '/items', items_path: 'results', total_path: 'total', page_size_param: 'limit', pagination: { style: 'page', param: 'page', first: 1 } } }),
    })
    const codec = testCodec()
    const first = await searchAll(connector, { resource: 'items', filter: {}, pageSize: 5 }, { maxPages: 1 }, { scope: TEST_SCOPE, cursorCodec: codec })
    const cursor = first.continuation && 'cursor' in first.continuation ? first.continuation.cursor : undefined
    assert.ok(typeof cursor === 'string', JSON.stringify(first.continuation))
    const second = await searchAll(connector, { resource: 'items', filter: {}, pageSize: 5, cursor }, {}, { scope: TEST_SCOPE, cursorCodec: codec })
    assert.equal(second.complete, false, `complete over ${second.items.map((r) => r.id).join(',')}`)
    assert.ok(second.incomplete_reasons.some((r) => r.code === 'SNAPSHOT_INVALIDATED' && /went from 12 to 11/.test(r.message)), JSON.stringify(second.incomplete_reasons))
    assert.equal(second.continuation, null)
  })

  it('moving on every read: not complete, SNAPSHOT_INVALIDATED naming the count that moved', async () => {
    reset(Array.from({ length: 40 }, (_, i) => i + 3))
    const envelope = await search({ style: 'page', param: 'page', first: 1 })
    assert.equal(envelope.complete, false, `complete over ${envelope.items.map((r) => r.id).join(',')}`)
    const reason = envelope.incomplete_reasons.find((r) => r.code === 'SNAPSHOT_INVALIDATED')
    assert.ok(reason, JSON.stringify(envelope.incomplete_reasons))
    assert.match(reason.message, /count of matching records went from \d+ to \d+/)
    assert.equal(envelope.continuation, null)
  })

  it('offset pages listed newest first: a record updated to the front while one already read is deleted leaves the record before the page in place; the total moving restarts the walk', async () => {
    // between page 1 (r001…r005) and page 2: r010 is updated (to the front of a newest-first list) and r002 deleted.
    // The read one record before offset 5 still finds r005 there, and r010 (there throughout) would never be read:
    // it was 11 records for the new total of 11, complete and `proven`
    reset([])
    moveBefore = new Map([[2, () => {
      const moved = items.find((i) => i.id === 'r010')!
      items = [{ ...moved, version: 2 }, ...items.filter((i) => i.id !== 'r010' && i.id !== 'r002')]
    }]])
    const envelope = await search({ style: 'offset' })
    const ids = envelope.items.map((r) => r.id)
    assert.ok(ids.includes('r010'), `r010 existed throughout and is missing: ${ids.join(',')} (complete: ${envelope.complete}, ${envelope.scope.stability})`)
    assert.equal(new Set(ids).size, ids.length)
    assert.equal(envelope.complete, true, JSON.stringify(envelope.incomplete_reasons))
    assert.equal(envelope.scope.stability, 'proven')
  })
})
