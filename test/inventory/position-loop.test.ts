import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { after, before, describe, it } from 'node:test'
import { envelopeSchema } from '../../src/contract/index.js'
import { createHttpConnector } from '../../src/connectors/http/index.js'
import { createCursorCodec, searchAll } from '../../src/inventory/index.js'
import { collection, httpResource } from '../connectors/http/fixtures.js'
import { sendJson, startUpstream, type TestUpstream } from '../connectors/http/upstream-server.js'

// An upstream whose cursors come round again (p1 → p2 → p3 → p1 …: a cursor keyed on a wrapping counter, a
// token that encodes the page modulo something) answers the same pages again forever. The walk read it to its
// page budget and called it data that moved (SNAPSHOT_INVALIDATED) with a continuation that only loops on: the
// source's paging loops, which is no end and no move. Under a pass of one call, a position read from before is
// refused as the loop it is.
const codec = createCursorCodec({ key: randomBytes(32) })
const scope = { resource: 'items', environment: 'test-upstream', visibility: 'all items', restricted: false }
const ITEMS = collection(12)
const PAGES: Record<string, { from: number; next: string }> = { start: { from: 0, next: 'p1' }, p1: { from: 3, next: 'p2' }, p2: { from: 6, next: 'p3' }, p3: { from: 9, next: 'p1' } }

describe('cursors that come round again', () => {
  let upstream: TestUpstream
  before(async () => {
    // {events: [...], paging: {after}}: pages of 3, and after the fourth page the cursor of the second again
    upstream = await startUpstream((req, res) => {
      const page = PAGES[req.url.searchParams.get('after') ?? 'start']
      if (!page) return sendJson(res, 400, { error: 'bad after' })
      sendJson(res, 200, { events: ITEMS.slice(page.from, page.from + 3), paging: { after: page.next } })
    })
  })
  after(() => upstream.close())

  it('not complete, SOURCE_UNAVAILABLE naming the repeated position, after one round (was: the page budget read, SNAPSHOT_INVALIDATED)', async () => {
    const connector = createHttpConnector({
      resource: httpResource({
        sources: [{ name: 'events', base_url: upstream.origin }],
        list: { path: '/v1/events', items_path: 'events', pagination: { style: 'cursor', param: 'after', next_cursor_path: 'paging.after' } },
      }),
    })
    const envelope = envelopeSchema.parse(await searchAll(connector, { resource: 'items', filter: {}, pageSize: 3 }, { maxPages: 40, deadlineMs: 10_000 }, { scope, cursorCodec: codec }))
    assert.equal(envelope.complete, false)
    const reason = envelope.incomplete_reasons.find((r) => r.code === 'SOURCE_UNAVAILABLE')
    assert.ok(reason?.message?.includes('"p1"'), JSON.stringify(envelope.incomplete_reasons))
    assert.ok(!envelope.incomplete_reasons.some((r) => r.code === 'SNAPSHOT_INVALIDATED' || r.code === 'CLIENT_LIMIT_REACHED'), JSON.stringify(envelope.incomplete_reasons))
    assert.notEqual(envelope.continuation?.kind, 'next_cursor', `a continuation would only loop on: ${JSON.stringify(envelope.continuation)}`)
    assert.deepEqual(envelope.items.map((i) => i.id), ITEMS.map((i) => i.id))
    assert.ok(upstream.seen.length <= 5, `${upstream.seen.length} requests`)
  })
})
