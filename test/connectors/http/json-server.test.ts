import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { createHttpConnector } from '../../../src/connectors/http/index.js'
import { callLog, collection, httpResource, idsOf, walk } from './fixtures.js'
import { startJsonServer, type JsonServerUpstream } from './json-server-upstream.js'

const ITEMS = collection(47)

describe('json-server 0.17 as a real upstream', () => {
  let upstream: JsonServerUpstream
  let origin: string
  before(async () => {
    upstream = await startJsonServer({ items: ITEMS.map((i) => ({ ...i })) })
    origin = upstream.origin
  })
  after(() => upstream.close())

  const resource = (list: Record<string, unknown>) =>
    httpResource({ sources: [{ name: 'json-server', base_url: origin }], list: { path: '/items', items_path: '', ...list } })

  it('offset paging with _start/_limit walks every item once and ends on the empty page', async () => {
    const log = callLog()
    const connector = createHttpConnector({
      resource: resource({ page_size_param: '_limit', pagination: { style: 'offset', offset_param: '_start' } }),
      onCall: log.onCall,
    })
    const { records } = await walk(connector, 'json-server', 10)
    assert.deepEqual(idsOf(records), ITEMS.map((i) => i.id))
    // 5 pages (10+10+10+10+7), each after the first re-reading the previous page's last item; then the page that
    // holds only that item, and the empty page that proves the end (json-server gives no total in the body)
    assert.equal(log.calls.length, 7)
  })

  it('_page/_limit with the Link header walks every item once and stops without rel="next"', async () => {
    const log = callLog()
    const connector = createHttpConnector({
      resource: resource({ page_size_param: '_limit', query: { _page: '1' }, pagination: { style: 'link_header' } }),
      onCall: log.onCall,
    })
    const { records } = await walk(connector, 'json-server', 10)
    assert.deepEqual(idsOf(records), ITEMS.map((i) => i.id))
    assert.equal(log.calls.length, 5)
  })

  it('page style with _page ends on the empty page', async () => {
    const connector = createHttpConnector({
      resource: resource({ page_size_param: '_limit', pagination: { style: 'page', param: '_page' } }),
    })
    const { records } = await walk(connector, 'json-server', 12)
    assert.deepEqual(idsOf(records), ITEMS.map((i) => i.id))
  })

  // json-server 0.17 counts pages from 1 and reads `_page=0` as page 1: under `first: 0` the second read answers
  // the first again, which the first-id comparison refuses (an upstream answering page 0 with nothing is
  // test/connectors/http/empty-first-page.test.ts)
  it('page style under first: 0 over this 1-based upstream is not complete: page 1 answers page 0 again', async () => {
    const connector = createHttpConnector({ resource: resource({ page_size_param: '_limit', pagination: { style: 'page', param: '_page', first: 0 } }) })
    await assert.rejects(walk(connector, 'json-server', 10), /page 2 was refused.*starts with the same record/)
  })

  it('page style under the right first: 1 with a filter nothing matches is complete and empty, after one read past it', async () => {
    const log = callLog()
    const connector = createHttpConnector({
      resource: resource({ page_size_param: '_limit', filter_params: { status: 'status' }, pagination: { style: 'page', param: '_page' } }),
      onCall: log.onCall,
    })
    const page = await (await connector.openSession()).readPage({ source: 'json-server', position: null, pageSize: 10, filter: { status: 'no_such_status' } })
    assert.equal(page.kind, 'page', JSON.stringify(page))
    assert.deepEqual(page.kind === 'page' && [page.items.length, page.next], [0, null])
    // and `_page=0`, page 1 again here (empty too), which tests that no page comes before page 1
    assert.equal(log.calls.length, 3)
  })

  it('an equality filter goes upstream as a query parameter, the rest is checked locally', async () => {
    const connector = createHttpConnector({
      resource: resource({ page_size_param: '_limit', filter_params: { status: 'status' }, pagination: { style: 'offset', offset_param: '_start' } }),
    })
    const { records } = await walk(connector, 'json-server', 5, { status: 'past_due', amount: { lt: 200 } })
    const expected = ITEMS.filter((i) => i.status === 'past_due' && i.amount < 200).map((i) => i.id)
    assert.ok(expected.length > 0)
    assert.deepEqual(idsOf(records), expected)
  })

  it('reads by id and writes through the real upstream', async () => {
    const connector = createHttpConnector({ resource: resource({ pagination: { style: 'offset', offset_param: '_start' } }) })
    const read = await connector.readByIds(['r005', 'r999'])
    assert.equal(read.records.get('r005')?.version, '1')
    assert.deepEqual(read.missing, ['r999'])
    const outcome = await connector.write({
      id: 'r005',
      expectedVersion: '1',
      set: { status: 'paused' },
      precondition: {},
      http: { method: 'PATCH', path: '/items/r005', body: { status: 'paused', version: 2 }, ifMatch: false },
    })
    assert.equal(outcome.kind, 'written')
    assert.deepEqual(outcome.kind === 'written' && outcome.record, { id: 'r005', version: '2', fields: { ...ITEMS[4], status: 'paused', version: 2 } })
    const missing = await connector.write({ id: 'r999', expectedVersion: '1', set: {}, precondition: {}, http: { method: 'PATCH', path: '/items/r999', body: {}, ifMatch: false } })
    assert.deepEqual([missing.kind, missing.kind === 'conflict' && missing.reason], ['conflict', 'missing'])
  })
  it('get.batch with one parameter per id (?id=a&id=b, a bare array) reads several records per request', async () => {
    const log = callLog()
    const connector = createHttpConnector({
      resource: httpResource({
        sources: [{ name: 'json-server', base_url: origin }],
        list: { path: '/items', items_path: '', pagination: { style: 'offset', offset_param: '_start' } },
        get: { path: '/items/{id}', batch: { path: '/items', ids_param: 'id', encoding: 'plain', items_path: '', max_ids: 20 } },
      }),
      onCall: log.onCall,
    })
    const wanted = ['r010', 'r011', 'r012', 'r040', 'r999']
    const read = await connector.readByIds(wanted)
    assert.deepEqual([...read.records.keys()].sort(), ['r010', 'r011', 'r012', 'r040'])
    assert.equal(read.records.get('r040')?.fields.amount, ITEMS[39]!.amount)
    assert.deepEqual(read.missing, ['r999'])
    // one request for all five, one record of it read alone (the answer is whole), and the id it did not carry
    assert.deepEqual(log.calls.map((c) => [c.endpoint, c.ids ?? c.targetId, c.outcome]), [
      ['/items/{id}', 'r010', 'found'],
      ['/items', 5, 'partial'],
      ['/items/{id}', 'r999', 'not_found'],
    ])
  })
})
