import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { after, before, describe, test } from 'node:test'
import { envelopeSchema } from '../../src/contract/index.js'
import { createHttpConnector } from '../../src/connectors/http/index.js'
import { createCursorCodec, searchAll } from '../../src/inventory/index.js'
import { collection, httpResource, stripeLikeList } from '../connectors/http/fixtures.js'
import { sendJson, startUpstream, type TestUpstream } from '../connectors/http/upstream-server.js'

// A Stripe-like list (`{data, has_more, total_count}`, the next page `starting_after` the last id, at most 3 records a
// page whatever is asked) that silently ignores the `status` parameter it is sent: it answers every record, and its
// total_count counts every record. Warrant re-checks each item, so it keeps only the matches; the walk reached the
// upstream's end (has_more false) having received every record the upstream counted. That is a whole answer: the
// upstream did not stop before its own count, and "narrow the query" would be advice against a cap that is not there.
const ITEMS = collection(20)
const codec = createCursorCodec({ key: randomBytes(32) })
const scope = { resource: 'items', environment: 'ignored-filter-total', visibility: 'all items', restricted: false }

describe('searchAll over an upstream whose total counts records its ignored filter let through (real loopback upstream)', () => {
  let upstream: TestUpstream
  // how many records the upstream serves in all: below ITEMS.length it stops early while its total counts them all
  let serves = ITEMS.length
  before(async () => {
    upstream = await startUpstream((req, res) => {
      const after = req.url.searchParams.get('starting_after')
      const rows = ITEMS.slice(0, serves)
      const from = after === null ? 0 : rows.findIndex((i) => i.id === after) + 1
      const limit = Math.min(Number(req.url.searchParams.get('limit') ?? 10), 3)
      const data = rows.slice(from, from + limit)
      sendJson(res, 200, { object: 'list', data, has_more: from + limit < rows.length, total_count: ITEMS.length })
    })
  })
  after(() => upstream.close())

  const search = () =>
    searchAll(
      createHttpConnector({
        resource: httpResource({
          sources: [{ name: 'main', base_url: upstream.origin }],
          list: stripeLikeList({ upstream_filters: [{ field: 'status', op: 'eq', param: 'status' }] }),
        }),
      }),
      { resource: 'items', filter: { status: 'past_due' }, pageSize: 10 },
      {},
      { scope, cursorCodec: codec },
    ).then((e) => envelopeSchema.parse(e))

  test('every record the upstream counted was received and judged: complete, with exactly the matches', async () => {
    serves = ITEMS.length
    const envelope = await search()
    const expected = ITEMS.filter((i) => i.status === 'past_due').map((i) => i.id)
    assert.deepEqual(
      envelope.items.map((i) => i['id']),
      expected,
    )
    assert.ok(upstream.seen.some((r) => r.url.searchParams.get('status') === 'past_due'), 'the filter went upstream')
    assert.deepEqual(envelope.incomplete_reasons, [])
    assert.equal(envelope.complete, true)
  })

  test('an upstream that ends before its own count is still not complete (RESULT_LIMIT_REACHED)', async () => {
    serves = 12
    const envelope = await search()
    assert.equal(envelope.complete, false)
    const reason = envelope.incomplete_reasons.find((r) => r.code === 'RESULT_LIMIT_REACHED')
    assert.ok(reason, JSON.stringify(envelope.incomplete_reasons))
    assert.match(reason.message ?? '', /counts 20 .* but .* 12/)
  })
})
