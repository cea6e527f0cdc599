import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { after, before, describe, it } from 'node:test'
import { envelopeSchema } from '../../../src/contract/index.js'
import type { Connector } from '../../../src/connectors/connector.js'
import { createHttpConnector } from '../../../src/connectors/http/index.js'
import { createCursorCodec, searchAll } from '../../../src/inventory/index.js'
import { collection, httpResource } from './fixtures.js'
import { sendJson, startUpstream, type TestUpstream } from './upstream-server.js'

// A walk that ends for lack of a next cursor or link, on an answer that says elsewhere that more follow (a
// cursor under another key, hasMore: true, a Link header under another rel, a HAL next link), is a config
// that does not match the upstream: not complete, naming where the answer says so and the configured key.
// The upstream caps its pages at 4 whatever is asked, so every page is short and the short-page rule alone
// would take the first page for the whole list.
const codec = createCursorCodec({ key: randomBytes(32) })
const scope = { resource: 'items', environment: 'test-upstream', visibility: 'all items', restricted: false }
const CAP = 4
const ITEMS = collection(11)

function search(connector: Connector) {
  return searchAll(connector, { resource: 'items', filter: {}, pageSize: 25 }, { maxPages: 50, deadlineMs: 10_000 }, { scope, cursorCodec: codec }).then((e) =>
    envelopeSchema.parse(e),
  )
}

function connectorAt(origin: string, list: Record<string, unknown>) {
  return createHttpConnector({
    resource: httpResource({ sources: [{ name: 'tickets', base_url: origin }], list: { path: '/v2/tickets', items_path: 'results', page_size_param: 'per_page', ...list } }),
  })
}

function assertRefused(envelope: Awaited<ReturnType<typeof search>>, ...words: string[]) {
  assert.equal(envelope.complete, false, `complete with ${envelope.items.length} of ${ITEMS.length} items`)
  const reason = envelope.incomplete_reasons.find((r) => r.code === 'SOURCE_UNAVAILABLE')
  assert.ok(reason, `no SOURCE_UNAVAILABLE among ${JSON.stringify(envelope.incomplete_reasons)}`)
  for (const w of words) assert.ok(reason.message?.includes(w), `${reason.message} does not name ${w}`)
}

describe('an answer that says more follow where the config does not look', () => {
  let upstream: TestUpstream
  before(async () => {
    // {results, paging: {nextPageToken}, hasMore} for `token` paging, `?from=` in a Link header rel="next-page"
    // or a HAL `_links.next.href` for link paging; the last page says null / false / no link
    upstream = await startUpstream((req, res) => {
      const q = req.url.searchParams
      const from = Number(q.get('page_token') ?? q.get('from') ?? 0)
      const to = Math.min(from + Math.min(Number(q.get('per_page') ?? CAP), CAP), ITEMS.length)
      const more = to < ITEMS.length
      const results = ITEMS.slice(from, to)
      const next = `/v2/tickets?from=${to}&style=${q.get('style')}`
      switch (q.get('style')) {
        case 'token':
          return sendJson(res, 200, { results, paging: { nextPageToken: more ? String(to) : null }, hasMore: more })
        case 'flag':
          return sendJson(res, 200, { results, hasMore: more })
        case 'rel':
          return sendJson(res, 200, { results }, more ? { link: `<${next}>; rel="next-page", </v2/tickets?style=rel>; rel="first"` } : {})
        case 'zendesk':
          // links.next is always written; meta.has_more says whether to follow it
          return sendJson(res, 200, { results, links: { next }, meta: { has_more: more, after_cursor: more ? String(to) : null } })
        case 'hal':
          return sendJson(res, 200, { results, _links: { self: { href: req.rawUrl }, ...(more ? { next: { href: next } } : {}) } })
      }
      sendJson(res, 400, { error: 'style?' })
    })
  })
  after(() => upstream.close())

  it('cursor at paging.nextPageToken, config next_cursor: not complete (was complete with 4 of 11), naming both', async () => {
    const envelope = await search(connectorAt(upstream.origin, { query: { style: 'token' }, pagination: { style: 'cursor', param: 'page_token' } }))
    assertRefused(envelope, '"paging.nextPageToken"', 'next_cursor_path "next_cursor"')
  })

  it('hasMore: true and no cursor at the configured path: not complete (was complete with 4 of 11), naming hasMore', async () => {
    const envelope = await search(connectorAt(upstream.origin, { query: { style: 'flag' }, pagination: { style: 'cursor', param: 'page_token' } }))
    assertRefused(envelope, '"hasMore"')
  })

  it('link_header paging, the upstream links rel="next-page": not complete (was complete with 4 of 11), naming the rel', async () => {
    const envelope = await search(connectorAt(upstream.origin, { query: { style: 'rel' }, pagination: { style: 'link_header' } }))
    assertRefused(envelope, 'rel="next-page"')
  })

  it('link_header paging, the upstream links in its body (_links.next.href): not complete, naming the path', async () => {
    const envelope = await search(connectorAt(upstream.origin, { query: { style: 'hal' }, pagination: { style: 'link_header' } }))
    assertRefused(envelope, '"_links.next.href"')
  })

  it('read at the right paths, the same upstream walks to the end, complete; its last page (null, false) is no evidence', async () => {
    const lists = [
      { query: { style: 'token' }, has_more_path: 'hasMore', pagination: { style: 'cursor', param: 'page_token', next_cursor_path: 'paging.nextPageToken' } },
      { query: { style: 'hal' }, pagination: { style: 'next_link', path: '_links.next.href' } },
      // a next link beside has_more: false is the end the flag says, not evidence of more
      { query: { style: 'zendesk' }, pagination: { style: 'cursor', param: 'page_token', next_cursor_path: 'meta.after_cursor' } },
    ]
    for (const list of lists) {
      const envelope = await search(connectorAt(upstream.origin, list))
      assert.equal(envelope.complete, true, `${list.query.style}: ${JSON.stringify(envelope.incomplete_reasons)}`)
      assert.deepEqual(envelope.items.map((i) => i.id), ITEMS.map((i) => i.id))
    }
  })
})
