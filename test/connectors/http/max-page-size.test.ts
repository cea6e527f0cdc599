import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { after, before, describe, it } from 'node:test'
import { envelopeSchema } from '../../../src/contract/index.js'
import type { Connector } from '../../../src/connectors/connector.js'
import { createHttpConnector } from '../../../src/connectors/http/index.js'
import { createCursorCodec, searchAll } from '../../../src/inventory/index.js'
import { collection, httpResource } from './fixtures.js'
import { sendJson, startUpstream, type TestUpstream } from './upstream-server.js'

// `list.max_page_size` declares the upstream's page cap: a page of that length is full, so a full page without
// the cursor at the configured path is refused even when the answer names the cursor under a key no paging
// API shares (`continuation` here), and the walk never asks for more than the cap.
const codec = createCursorCodec({ key: randomBytes(32) })
const scope = { resource: 'items', environment: 'test-upstream', visibility: 'all items', restricted: false }
const CAP = 3
const ITEMS = collection(8)

function search(connector: Connector) {
  return searchAll(connector, { resource: 'items', filter: {}, pageSize: 40 }, { maxPages: 50, deadlineMs: 10_000 }, { scope, cursorCodec: codec }).then((e) =>
    envelopeSchema.parse(e),
  )
}

function connectorAt(origin: string, list: Record<string, unknown>) {
  return createHttpConnector({
    resource: httpResource({ sources: [{ name: 'eu', base_url: origin }], list: { path: '/docs', items_path: 'data', page_size_param: 'top', ...list } }),
  })
}

describe('an upstream capping its pages at 3, its cursor under "continuation"', () => {
  let upstream: TestUpstream
  before(async () => {
    upstream = await startUpstream((req, res) => {
      const from = Number(req.url.searchParams.get('token') ?? 0)
      const to = Math.min(from + Math.min(Number(req.url.searchParams.get('top') ?? CAP), CAP), ITEMS.length)
      sendJson(res, 200, { data: ITEMS.slice(from, to), continuation: to < ITEMS.length ? String(to) : null })
    })
  })
  after(() => upstream.close())

  it('max_page_size 3 and the default next_cursor_path: not complete (a full page without its cursor), naming both keys', async () => {
    const envelope = await search(connectorAt(upstream.origin, { max_page_size: CAP, pagination: { style: 'cursor', param: 'token' } }))
    assert.equal(envelope.complete, false, `complete with ${envelope.items.length} of ${ITEMS.length}`)
    const reason = envelope.incomplete_reasons.find((r) => r.code === 'SOURCE_UNAVAILABLE')
    assert.ok(reason?.message?.includes('next_cursor_path "next_cursor"'), JSON.stringify(envelope.incomplete_reasons))
    assert.ok(reason?.message?.includes('max_page_size 3'), reason?.message)
  })

  it('max_page_size 3 at the right path: every page asks for 3, the walk ends complete', async () => {
    upstream.seen.length = 0
    const envelope = await search(connectorAt(upstream.origin, { max_page_size: CAP, pagination: { style: 'cursor', param: 'token', next_cursor_path: 'continuation' } }))
    assert.equal(envelope.complete, true, JSON.stringify(envelope.incomplete_reasons))
    assert.deepEqual(envelope.items.map((i) => i.id), ITEMS.map((i) => i.id))
    assert.deepEqual(upstream.seen.map((r) => r.url.searchParams.get('top')), ['3', '3', '3'])
  })

  it('max_page_size must be a positive integer', () => {
    assert.throws(() => connectorAt(upstream.origin, { max_page_size: 0 }), /max_page_size/)
  })
})
