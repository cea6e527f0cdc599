import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { after, before, describe, test } from 'node:test'
import { envelopeSchema, matchesFilter, type Filter } from '../../src/contract/index.js'
import { createHttpConnector } from '../../src/connectors/http/index.js'
import { createCursorCodec, searchAll } from '../../src/inventory/index.js'
import { collection, httpResource } from '../connectors/http/fixtures.js'
import { sendJson, startUpstream, type TestUpstream } from '../connectors/http/upstream-server.js'

// A search endpoint (POST, query in the body, keyset on the id) that ignores the filter it is sent and
// answers with everything. The count Warrant gives is the count of records that match, never the
// upstream's word: every item is re-checked against the whole filter.
const ITEMS = collection(40)
const codec = createCursorCodec({ key: randomBytes(32) })
const scope = { resource: 'items', environment: 'ignored-filter', visibility: 'all items', restricted: false }

describe('searchAll over an upstream that ignores the filter it was sent (real loopback upstream)', () => {
  let upstream: TestUpstream
  before(async () => {
    upstream = await startUpstream((req, res) => {
      const body = JSON.parse(req.body) as { size: number; after?: string }
      const from = body.after === undefined ? 0 : ITEMS.findIndex((i) => i.id > body.after!)
      sendJson(res, 200, { results: from < 0 ? [] : ITEMS.slice(from, from + body.size) })
    })
  })
  after(() => upstream.close())

  const search = (filter: Filter) =>
    searchAll(
      createHttpConnector({
        resource: httpResource({
          sources: [{ name: 'main', base_url: upstream.origin }],
          list: {
            path: '/search',
            method: 'POST',
            body: { where: { status: '{{filter.status.in}}', amount_min: '{{filter.amount.gte}}' }, size: '{{page_size}}', after: '{{cursor}}' },
            upstream_filters: [
              { field: 'status', op: 'in' },
              { field: 'amount', op: 'gte' },
            ],
            items_path: 'results',
            pagination: { style: 'keyset', field: 'id' },
          },
        }),
      }),
      { resource: 'items', filter, pageSize: 7 },
      {},
      { scope, cursorCodec: codec },
    ).then((e) => envelopeSchema.parse(e))

  test('the envelope holds exactly the matching records, however many the upstream sent', async () => {
    const filter: Filter = { status: { in: ['past_due'] }, amount: { gte: 150 } }
    const envelope = await search(filter)
    const expected = ITEMS.filter((i) => matchesFilter({ ...i }, filter, { id: 'string', status: 'string', amount: 'number', version: 'integer' })).map((i) => i.id)
    assert.ok(expected.length > 0 && expected.length < 10)
    assert.deepEqual(
      envelope.items.map((i) => i['id']),
      expected,
    )
    assert.equal(envelope.page.returned, expected.length)
    // the filter did go upstream, in the body, typed
    const sent = JSON.parse(upstream.seen[0]!.body) as Record<string, unknown>
    assert.deepEqual(sent, { where: { status: ['past_due'], amount_min: 150 }, size: 7 })
  })

  test('a filter that matches nothing the upstream sent: zero, never the upstream count', async () => {
    const envelope = await search({ status: { in: ['cancelled'] } })
    assert.deepEqual(envelope.items, [])
    assert.ok(envelope.page.pages_read! >= Math.ceil(ITEMS.length / 7), 'the whole collection was read and judged')
  })
})
