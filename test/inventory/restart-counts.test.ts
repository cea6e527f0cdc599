import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { createHttpConnector } from '../../src/connectors/http/index.js'
import { searchAll } from '../../src/inventory/index.js'
import { collection, httpResource } from '../connectors/http/fixtures.js'
import { sendJson, startUpstream, type TestUpstream } from '../connectors/http/upstream-server.js'
import { TEST_SCOPE, testCodec } from './helpers.js'

/**
 * A source that moved under the walk is read again from its start within the call: what the first pass counted of
 * its pages (records that could not be judged) is read again with them, so it is counted once, not once per pass.
 * It was: one record without a status, read in both passes, "2 record(s) … could not be judged".
 */
describe('a source read again after it moved counts its unjudged records once', () => {
  let items: Record<string, unknown>[] = []
  let reads = 0
  let upstream: TestUpstream
  before(async () => {
    upstream = await startUpstream((req, res) => {
      reads += 1
      // before the second page is read, a record already read is deleted: the overlap finds another record
      if (reads === 2) items = items.filter((i) => i.id !== 'r001')
      const offset = Number(req.url.searchParams.get('offset') ?? 0)
      const size = Number(req.url.searchParams.get('limit') ?? 5)
      sendJson(res, 200, { results: items.slice(offset, offset + size) })
    })
  })
  after(() => upstream?.close())

  it('one record without its status, on the first page of both passes: record_count 1', async () => {
    items = collection(8).map((item) => (item.id === 'r003' ? { id: item.id, amount: item.amount, version: item.version } : { ...item }))
    reads = 0
    const connector = createHttpConnector({
      resource: httpResource({ sources: [{ name: 'main', base_url: upstream.origin }], list: { path: '/items', items_path: 'results', page_size_param: 'limit', pagination: { style: 'offset' } } }),
    })
    const envelope = await searchAll(connector, { resource: 'items', filter: {}, pageSize: 5 }, {}, { scope: TEST_SCOPE, cursorCodec: testCodec() })
    assert.ok(reads > 3, `the source was read again (${reads} reads)`)
    const shape = envelope.incomplete_reasons.filter((r) => r.code === 'SHAPE_MISMATCH')
    assert.equal(shape.length, 1, JSON.stringify(envelope.incomplete_reasons))
    assert.equal((shape[0] as { record_count?: number }).record_count, 1, shape[0]!.message)
    assert.match(shape[0]!.message, /^1 record/)
  })
})
