import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { test } from 'node:test'
import { envelopeSchema } from '../../../src/contract/index.js'
import { createHttpConnector } from '../../../src/connectors/http/index.js'
import { createCursorCodec, searchAll } from '../../../src/inventory/index.js'
import { collection, httpResource } from './fixtures.js'
import { sendJson, startUpstream, type TestUpstream } from './upstream-server.js'

// A Stripe-like upstream that caps its pages at 3 (asked 100), declares no has_more and no total, and writes its
// cursor under a key no paging API is known to use: with next_cursor_path pointing at nothing, the first short page
// was taken for the end and search said complete: true with 3 of 20 records (`warrant check` said UNSAFE,
// short_pages; serve answered anyway).
const codec = createCursorCodec({ key: randomBytes(32) })
const scope = { resource: 'items', environment: 'test-upstream', visibility: 'all items', restricted: false }
const ITEMS = collection(20)
const CAP = 3

function startCappedUpstream(): Promise<TestUpstream> {
  return startUpstream((req, res) => {
    const from = Number(req.url.searchParams.get('starting_from') ?? 0)
    const to = Math.min(from + Math.min(Number(req.url.searchParams.get('limit') ?? CAP), CAP), ITEMS.length)
    // the last page leaves its cursor out, as many upstreams do
    sendJson(res, 200, { object: 'list', url: '/v1/items', data: ITEMS.slice(from, to), ...(to < ITEMS.length ? { resume_from: String(to) } : {}) })
  })
}

async function search(up: TestUpstream, list: Record<string, unknown>) {
  const resource = httpResource({ sources: [{ name: 'main', base_url: up.origin }], list: { path: '/v1/items', items_path: 'data', page_size_param: 'limit', ...list } })
  return envelopeSchema.parse(await searchAll(createHttpConnector({ resource }), { resource: 'items', filter: {}, pageSize: 100 }, { maxPages: 50, deadlineMs: 10_000 }, { scope, cursorCodec: codec }))
}

test('a capped first page with no cursor at a misread next_cursor_path: not complete, naming next_cursor_path and max_page_size (was complete: true with 3 of 20)', async () => {
  const up = await startCappedUpstream()
  try {
    const env = await search(up, { pagination: { style: 'cursor', param: 'starting_from', next_cursor_path: 'next_cursor' } })
    assert.equal(env.complete, false, `complete with ${env.items.length} of 20`)
    const reason = env.incomplete_reasons.find((r) => r.code === 'SOURCE_UNAVAILABLE')
    assert.ok(reason?.message?.includes('next_cursor_path "next_cursor"'), JSON.stringify(env.incomplete_reasons))
    assert.ok(reason?.message?.includes('max_page_size'), reason?.message)
  } finally {
    await up.close()
  }
})

test('the same upstream, next_cursor_path where it writes its cursor: complete, all 20', async () => {
  const up = await startCappedUpstream()
  try {
    const env = await search(up, { pagination: { style: 'cursor', param: 'starting_from', next_cursor_path: 'resume_from' } })
    assert.equal(env.complete, true, JSON.stringify(env.incomplete_reasons))
    assert.deepEqual(env.items.map((i) => (i as { id: string }).id), ITEMS.map((i) => i.id))
  } finally {
    await up.close()
  }
})

test('a misread next_cursor_path with max_page_size declared at the cap: the full first page without a cursor is refused, naming next_cursor_path', async () => {
  const up = await startCappedUpstream()
  try {
    const env = await search(up, { max_page_size: CAP, pagination: { style: 'cursor', param: 'starting_from', next_cursor_path: 'next_cursor' } })
    assert.equal(env.complete, false, `complete with ${env.items.length} of 20`)
    assert.ok(env.incomplete_reasons.some((r) => r.message?.includes('next_cursor_path "next_cursor"')), JSON.stringify(env.incomplete_reasons))
  } finally {
    await up.close()
  }
})
