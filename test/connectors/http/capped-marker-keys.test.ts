import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { describe, test } from 'node:test'
import { envelopeSchema } from '../../../src/contract/index.js'
import { createHttpConnector } from '../../../src/connectors/http/index.js'
import { createCursorCodec, searchAll } from '../../../src/inventory/index.js'
import { collection, httpResource } from './fixtures.js'
import { sendJson, startUpstream } from './upstream-server.js'

// Upstreams that cap their pages (5 here, asked 10) answer every page short, so a next_cursor_path that misses
// their cursor ends the walk after its first page unless the answer is searched for the cursor it holds. These
// write it where the search did not look: HubSpot's `paging.next.after` (an object under "next" with no href),
// Airtable's `offset` token, Azure's `continuationToken`, S3's `NextContinuationToken` / `NextMarker`. Each walk
// said complete: true with 5 of 25 records.
const codec = createCursorCodec({ key: randomBytes(32) })
const scope = { resource: 'items', environment: 'test-upstream', visibility: 'all items', restricted: false }
const ITEMS = collection(25)
const CAP = 5

type Shape = (page: unknown[], next: string | null) => Record<string, unknown>
const SHAPES: Record<string, { shape: Shape; cursor: string; said: string }> = {
  'HubSpot paging.next.after': { shape: (page, next) => ({ items: page, ...(next ? { paging: { next: { after: next, link: `?after=${next}` } } } : {}) }), cursor: 'paging.next.after', said: '"paging.next.' },
  'Airtable offset': { shape: (page, next) => ({ items: page, ...(next ? { offset: `itr${next}/rec${next}` } : {}) }), cursor: 'offset', said: '"offset"' },
  'Azure continuationToken': { shape: (page, next) => ({ items: page, continuationToken: next }), cursor: 'continuationToken', said: '"continuationToken"' },
  'S3 NextContinuationToken': { shape: (page, next) => ({ items: page, IsTruncated: next !== null, ...(next ? { NextContinuationToken: next } : {}) }), cursor: 'NextContinuationToken', said: '"NextContinuationToken"' },
  'S3 v1 NextMarker': { shape: (page, next) => ({ items: page, ...(next ? { NextMarker: next } : {}) }), cursor: 'NextMarker', said: '"NextMarker"' },
}

async function searchShape(shape: Shape, nextCursorPath: string) {
  const up = await startUpstream((req, res) => {
    const raw = req.url.searchParams.get('cursor') ?? '0'
    const from = Number(/\d+/.exec(raw)?.[0] ?? 0)
    const to = Math.min(from + Math.min(Number(req.url.searchParams.get('limit') ?? CAP), CAP), ITEMS.length)
    sendJson(res, 200, shape(ITEMS.slice(from, to), to < ITEMS.length ? String(to) : null))
  })
  try {
    const resource = httpResource({ sources: [{ name: 'main', base_url: up.origin }], list: { path: '/items', page_size_param: 'limit', pagination: { style: 'cursor', param: 'cursor', next_cursor_path: nextCursorPath } } })
    return envelopeSchema.parse(await searchAll(createHttpConnector({ resource }), { resource: 'items', filter: {}, pageSize: 10 }, { maxPages: 50, deadlineMs: 10_000 }, { scope, cursorCodec: codec }))
  } finally {
    await up.close()
  }
}

describe('a capped upstream whose cursor the configured path misses', () => {
  for (const [name, { shape, said }] of Object.entries(SHAPES))
    test(`${name}: not complete, naming where the answer holds its cursor (was complete: true with 5 of 25)`, async () => {
      const env = await searchShape(shape, 'next_cursor')
      assert.equal(env.complete, false, `complete with ${env.items.length} of 25`)
      const reason = env.incomplete_reasons.find((r) => r.code === 'SOURCE_UNAVAILABLE')
      assert.ok(reason?.message?.includes(said), JSON.stringify(env.incomplete_reasons))
      assert.ok(reason?.message?.includes('next_cursor_path "next_cursor"'), reason?.message)
    })
})

test('S3 IsTruncated: true beside a cursor under a key no search knows: not complete, naming IsTruncated', async () => {
  const env = await searchShape((page, next) => ({ items: page, IsTruncated: next !== null, ...(next ? { Resume: next } : {}) }), 'next_cursor')
  assert.equal(env.complete, false, `complete with ${env.items.length} of 25`)
  assert.ok(env.incomplete_reasons.some((r) => r.message?.includes('"IsTruncated" is true')), JSON.stringify(env.incomplete_reasons))
})

describe('more shapes, their cursor missed the same way', () => {
  const more: Record<string, { shape: Shape; said: string }> = {
    'Salesforce done: false, nextRecordsUrl': { shape: (page, next) => ({ items: page, done: next === null, ...(next ? { nextRecordsUrl: `/query/01g-${next}` } : {}) }), said: '"nextRecordsUrl"' },
    'Jira isLast: false': { shape: (page, next) => ({ items: page, isLast: next === null, ...(next ? { token: next } : {}) }), said: '"isLast" is false' },
    'Asana next_page.offset': { shape: (page, next) => ({ items: page, next_page: next ? { offset: `eyJ${next}`, path: `/items?offset=eyJ${next}`, uri: `https://app.asana.com/api/1.0/items?offset=eyJ${next}` } : null }), said: '"next_page.' },
    'PayPal links [{rel: next}]': { shape: (page, next) => ({ items: page, links: [{ href: '/items', rel: 'self' }, ...(next ? [{ href: `/items?cursor=${next}`, rel: 'next', method: 'GET' }] : [])] }), said: '"links"' },
    'Zoho info.more_records': { shape: (page, next) => ({ items: page, info: { more_records: next !== null, page_token: next } }), said: '"info.more_records" is true' },
  }
  for (const [name, { shape, said }] of Object.entries(more))
    test(`${name}: not complete, naming it (was complete: true with 5 of 25)`, async () => {
      const env = await searchShape(shape, 'next_cursor')
      assert.equal(env.complete, false, `complete with ${env.items.length} of 25`)
      assert.ok(env.incomplete_reasons.some((r) => r.message?.includes(said)), JSON.stringify(env.incomplete_reasons))
    })

  test('done: true, isLast: true and a rel="self" link on every page say nothing of more: complete with the configured cursor', async () => {
    const env = await searchShape((page, next) => ({ items: page, done: true, isLast: true, links: [{ href: '/items', rel: 'self' }], next_cursor: next }), 'next_cursor')
    assert.equal(env.complete, true, JSON.stringify(env.incomplete_reasons))
    assert.equal(env.items.length, 25)
  })
})

describe('the same upstreams, configured where they write it', () => {
  for (const [name, { shape, cursor }] of Object.entries(SHAPES))
    test(`${name}: complete, all 25`, async () => {
      const env = await searchShape(shape, cursor)
      assert.equal(env.complete, true, JSON.stringify(env.incomplete_reasons))
      assert.equal(env.items.length, 25)
    })

  test('an offset echoed as a number (or digits) is where the page started, never a cursor: complete', async () => {
    for (const offset of [20, '20']) {
      const env = await searchShape((page, next) => ({ items: page, offset, next_cursor: next }), 'next_cursor')
      assert.equal(env.complete, true, `${JSON.stringify(offset)}: ${JSON.stringify(env.incomplete_reasons)}`)
      assert.equal(env.items.length, 25)
    }
  })
})
