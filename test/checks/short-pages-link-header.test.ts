import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { checkResource } from '../../src/checks/index.js'
import { createHttpConnector } from '../../src/connectors/http/index.js'
import { httpResource } from '../connectors/http/fixtures.js'
import { sendJson, startUpstream, type TestUpstream } from '../connectors/http/upstream-server.js'

// `short_pages` said not_applicable for link_header paging, so `warrant check` vouched for nothing there. A walk
// in that style takes a short page without a Link header for the end, like a missing cursor: an upstream capping
// its pages (here at 20) that pages some other way (a `page` number in the body) answered every page short and
// Link-less, and the walk stopped after its first page, complete, the sample agreeing. Asked for a page of two,
// the run-time walk refuses a full first page with no Link header, or an end with records still to come.
describe('warrant check: short pages under link_header paging', () => {
  const rows = Array.from({ length: 60 }, (_, i) => ({ uid: `u-${i}`, status: i % 2 ? 'active' : 'past_due', amount: i, version: 1 }))
  let up: TestUpstream
  before(async () => {
    up = await startUpstream((req, res) => {
      const one = /^\/people\/(.+)$/.exec(req.url.pathname)
      if (one) {
        const row = rows.find((r) => r.uid === one[1])
        return sendJson(res, row ? 200 : 404, row ?? {})
      }
      const page = Number(req.url.searchParams.get('page') ?? 1)
      const size = Math.min(20, Number(req.url.searchParams.get('per_page') ?? 30))
      const slice = rows.slice((page - 1) * size, page * size)
      const more = page * size < rows.length
      const next = `${up.origin}/people?page=${page + 1}&per_page=${size}`
      const mode = req.url.searchParams.get('mode')
      // "links": a Link header on each page but the last, as GitHub does; "body": the next page named in the body
      // only; "rels": a Link header on every page, naming only rel="first"
      const headers: Record<string, string> =
        mode === 'body' ? {} : mode === 'rels' ? { link: `<${up.origin}/people?page=1>; rel="first"` } : more ? { link: `<${next}&mode=links>; rel="next"` } : {}
      sendJson(res, 200, { people: slice, ...(mode === 'body' ? { following: more ? page + 1 : null } : {}) }, headers)
    })
  })
  after(() => up.close())

  const check = (mode: string) => {
    const config = httpResource(
      {
        sources: [{ name: 'hr', base_url: up.origin }],
        get: { path: '/people/{id}' },
        field_paths: { id: 'uid' },
        list: { path: `/people?mode=${mode}`, items_path: 'people', page_size_param: 'per_page', pagination: { style: 'link_header' } },
      },
      {},
    )
    return checkResource({ name: 'people', config, connector: createHttpConnector({ resource: config }) })
  }

  for (const mode of ['body', 'rels'])
    test(`an upstream that does not page by Link header (${mode}) is unsafe, naming connector.list.pagination (was not_applicable)`, async () => {
      const report = await check(mode)
      const g = report.guarantees.find((x) => x.name === 'short_pages')
      assert.equal(g?.status, 'unsafe', JSON.stringify(g))
      assert.ok(g.config_keys.includes('connector.list.pagination'), JSON.stringify(g))
      assert.equal(report.verdict, 'unsafe')
    })

  test('an upstream that pages by Link header holds', async () => {
    const report = await check('links')
    const g = report.guarantees.find((x) => x.name === 'short_pages')
    assert.equal(g?.status, 'holds', JSON.stringify(g))
  })
})
