import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { after, before, describe, test } from 'node:test'
import { createHttpConnector } from '../../src/connectors/http/index.js'
import { decide, envelopeSchema, type Envelope } from '../../src/contract/index.js'
import { createCursorCodec, searchAll } from '../../src/inventory/index.js'
import { collection, httpResource } from '../connectors/http/fixtures.js'
import { sendJson, startUpstream, type TestUpstream } from '../connectors/http/upstream-server.js'

// An upstream paged by keyset on the id whose ids are not unique: each page after the first starts with a
// second row of the previous page's last id. The walk drops the copies and reads on to the end, so its reason
// must say that, not "the same request would fail the same way … the rest of its records are missing", the
// words of a refused source that was never read further.
const ITEMS = collection(12)
const codec = createCursorCodec({ key: randomBytes(32) })
const scope = { resource: 'items', environment: 'repeated-ids', visibility: 'all items', restricted: false }

describe('a keyset source whose ids repeat across pages (real loopback upstream)', () => {
  let upstream: TestUpstream
  before(async () => {
    upstream = await startUpstream((req, res) => {
      const body = JSON.parse(req.body) as { size: number; after?: string }
      const from = body.after === undefined ? 0 : ITEMS.findIndex((i) => i.id > body.after!)
      const page = from < 0 ? [] : ITEMS.slice(from, from + body.size)
      const twin = body.after === undefined || from <= 0 ? [] : [{ ...ITEMS[from - 1]!, status: 'twin' }]
      sendJson(res, 200, { results: [...twin, ...page].slice(0, body.size) })
    })
  })
  after(() => upstream.close())

  const search = (budget: { maxPages?: number } = {}) =>
    searchAll(
      createHttpConnector({
        resource: httpResource({
          sources: [{ name: 'main', base_url: upstream.origin }],
          list: { path: '/search', method: 'POST', body: { size: '{{page_size}}', after: '{{cursor}}' }, items_path: 'results', pagination: { style: 'keyset', field: 'id' } },
        }),
      }),
      { resource: 'items', filter: {}, pageSize: 4 },
      budget,
      { scope, cursorCodec: codec },
    ).then((e) => envelopeSchema.parse(e))

  const repeatedReason = (envelope: Envelope<Record<string, unknown>>) => {
    const reason = envelope.incomplete_reasons.find((r) => r.code === 'SOURCE_UNAVAILABLE')
    assert.ok(reason, JSON.stringify(envelope.incomplete_reasons))
    assert.doesNotMatch(reason.message, /same request would fail the same way|the rest of its records are missing|failed earlier/)
    assert.match(reason.message, /not unique/)
    assert.match(reason.message, /did not stop at them/)
    assert.equal(reason.retry_after_seconds, undefined, 'walking again meets the same ids: no wait fixes it')
    return reason
  }

  test('read in one call: every id once, not complete, the reason says the walk did not stop at the repeated ids', async () => {
    const envelope = await search()
    assert.equal(envelope.complete, false)
    assert.deepEqual(envelope.items.map((i) => i['id']), ITEMS.map((i) => i.id))
    assert.match(repeatedReason(envelope).message, /"r004"/)
    assert.equal(decide(envelope, 'prove_absence').decision, 'refuse_or_request_review')
  })

  // Moved data (the repeated record, without a snapshot) ends the attempt: no continuation. The budget's reason
  // said "the cursor resumes it" all the same, a cursor the answer did not carry.
  test('stopped by its page budget: no continuation, and no reason promises a cursor', async () => {
    const envelope = await search({ maxPages: 2 })
    assert.equal(envelope.continuation, null)
    const budget = envelope.incomplete_reasons.find((r) => r.code === 'CLIENT_LIMIT_REACHED')
    assert.ok(budget, JSON.stringify(envelope.incomplete_reasons))
    for (const reason of envelope.incomplete_reasons) assert.doesNotMatch(reason.message, /the cursor resumes|with the cursor/, reason.message)
    assert.match(budget.message, /a new walk/)
  })
})
