import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { checkResource } from '../../src/checks/index.js'
import { createHttpConnector } from '../../src/connectors/http/index.js'
import { collection, httpResource } from '../connectors/http/fixtures.js'
import { answerItemById, sendJson, startUpstream, type TestUpstream } from '../connectors/http/upstream-server.js'

// A walk takes a page shorter than asked, without the next cursor or link at the configured path, as the end of
// the list (HAL and many APIs leave `next` out on the last page). An upstream that caps its pages below the size
// asked answers every page short: a next_cursor_path the answers do not have then ended every walk after its first
// page, complete: true, and `warrant check`, reading pages of 50 from an upstream capped at 25, said it all held.
describe('warrant check asks for a page the upstream cannot shorten', () => {
  const items = collection(100)
  let up: TestUpstream
  before(async () => {
    up = await startUpstream((req, res) => {
      if (answerItemById(items, req, res)) return
      const from = Number(req.url.searchParams.get('after') ?? 0)
      const page = items.slice(from, from + Math.min(25, Number(req.url.searchParams.get('limit') ?? 10)))
      // the cursor sits at next.token; on the last page there is no `next` at all
      sendJson(res, 200, { items: page, ...(from + page.length < items.length ? { next: { token: String(from + page.length) } } : {}) })
    })
  })
  after(() => up.close())

  const check = (list: Record<string, unknown>) => {
    const config = httpResource({ sources: [{ name: 'main', base_url: up.origin }], list: { path: '/items', ...list } })
    return checkResource({ name: 'items', config, connector: createHttpConnector({ resource: config }) })
  }
  const cursorAt = (path: string) => ({ page_size_param: 'limit', pagination: { style: 'cursor', param: 'after', next_cursor_path: path } })

  test('a next_cursor_path the answers do not have is unsafe, naming it (was verdict holds)', async () => {
    const report = await check(cursorAt('next_token'))
    assert.equal(report.verdict, 'unsafe', JSON.stringify(report.guarantees, null, 2))
    const g = report.guarantees.find((x) => x.name === 'short_pages')
    assert.equal(g?.status, 'unsafe', JSON.stringify(g))
    assert.ok(g.config_keys.includes('connector.list.pagination.next_cursor_path'), JSON.stringify(g))
    assert.match(g.detail, /next_token/)
  })

  test('the right path holds', async () => {
    const report = await check(cursorAt('next.token'))
    const g = report.guarantees.find((x) => x.name === 'short_pages')
    assert.equal(g?.status, 'holds', JSON.stringify(g))
    assert.equal(report.verdict, 'holds', JSON.stringify(report.guarantees, null, 2))
  })

  test('without a page size sent, only an empty page is short: not applicable', async () => {
    const report = await check({ pagination: { style: 'cursor', param: 'after', next_cursor_path: 'next_token' } })
    assert.equal(report.guarantees.find((x) => x.name === 'short_pages')?.status, 'not_applicable')
  })
})
