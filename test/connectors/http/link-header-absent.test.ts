import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { after, before, describe, it } from 'node:test'
import { envelopeSchema } from '../../../src/contract/index.js'
import type { Connector } from '../../../src/connectors/connector.js'
import { createHttpConnector } from '../../../src/connectors/http/index.js'
import { createCursorCodec, searchAll } from '../../../src/inventory/index.js'
import { collection, httpResource } from './fixtures.js'
import { sendJson, startUpstream, type TestUpstream } from './upstream-server.js'

// link_header paging read "no Link header at all" as "no rel=next": the end, even on a full page. An upstream
// that pages by something else (an X-Next-Page header, a page count) then ended every walk after its first page,
// complete. No Link header is now the absent marker it is (a full page without it is refused, as a cursor
// path missing from a full page is); a Link header without rel="next" is still the end; an X-Next-* header
// with a value is evidence that more follow, on a short page too.
const codec = createCursorCodec({ key: randomBytes(32) })
const scope = { resource: 'items', environment: 'test-upstream', visibility: 'all items', restricted: false }
const ITEMS = collection(13)

function search(connector: Connector, pageSize = 5) {
  return searchAll(connector, { resource: 'items', filter: {}, pageSize }, { maxPages: 40, deadlineMs: 10_000 }, { scope, cursorCodec: codec }).then((e) =>
    envelopeSchema.parse(e),
  )
}

const connectorAt = (origin: string, path: string) =>
  createHttpConnector({
    resource: httpResource({ sources: [{ name: 'repo', base_url: origin }], list: { path, items_path: '', page_size_param: 'per_page', pagination: { style: 'link_header' } } }),
  })

function assertRefused(envelope: Awaited<ReturnType<typeof search>>, words: string) {
  assert.equal(envelope.complete, false, `complete with ${envelope.items.length} of ${ITEMS.length}`)
  const reason = envelope.incomplete_reasons.find((r) => r.code === 'SOURCE_UNAVAILABLE')
  assert.ok(reason?.message?.includes(words), JSON.stringify(envelope.incomplete_reasons))
}

describe('link_header paging against upstreams that send no Link header', () => {
  let upstream: TestUpstream
  before(async () => {
    // bare arrays; /counted says X-Total-Pages, /capped caps at 3 and says X-Next-Page, /linked links GitHub's way
    // (rel="next" while more follow, rel="prev" and "first" on the last page)
    upstream = await startUpstream((req, res) => {
      const page = Number(req.url.searchParams.get('page') ?? 1)
      const size = req.url.pathname === '/capped' ? 3 : Number(req.url.searchParams.get('per_page') ?? 5)
      const items = ITEMS.slice((page - 1) * size, page * size)
      const more = page * size < ITEMS.length
      const at = (p: number) => `${upstream.origin}${req.url.pathname}?per_page=${size}&page=${p}`
      if (req.url.pathname === '/counted') return sendJson(res, 200, items, { 'x-total-pages': String(Math.ceil(ITEMS.length / size)) })
      if (req.url.pathname === '/capped') return sendJson(res, 200, items, more ? { 'x-next-page': String(page + 1) } : {})
      const link = more ? `<${at(page + 1)}>; rel="next", <${at(1)}>; rel="first"` : `<${at(page - 1)}>; rel="prev", <${at(1)}>; rel="first"`
      sendJson(res, 200, items, { link })
    })
  })
  after(() => upstream.close())

  it('a full page and no Link header: not complete (was complete with 5 of 13), naming the Link header', async () => {
    assertRefused(await search(connectorAt(upstream.origin, '/counted')), 'Link header')
  })

  it('a short page (a cap of 3), no Link header, X-Next-Page: 2: not complete (was complete with 3 of 13), naming X-Next-Page', async () => {
    assertRefused(await search(connectorAt(upstream.origin, '/capped')), 'x-next-page')
  })

  it('an upstream that links its pages walks to the end, complete; a list shorter than a page without any Link header is whole', async () => {
    const linked = await search(connectorAt(upstream.origin, '/linked'))
    assert.equal(linked.complete, true, JSON.stringify(linked.incomplete_reasons))
    assert.deepEqual(linked.items.map((i) => i.id), ITEMS.map((i) => i.id))
    const one = await search(connectorAt(upstream.origin, '/counted'), 20)
    assert.equal(one.complete, true, JSON.stringify(one.incomplete_reasons))
    assert.equal(one.items.length, ITEMS.length)
  })
})
