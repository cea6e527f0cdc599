import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { checkResource } from '../../src/checks/index.js'
import { createHttpConnector } from '../../src/connectors/http/index.js'
import { collection, httpResource } from '../connectors/http/fixtures.js'
import { answerItemById, sendJson, startUpstream, type TestUpstream } from '../connectors/http/upstream-server.js'

// Page-number paging starts at `pagination.first`, 1 unless set. An upstream counting from 0 (Spring's `page=0`)
// under the default had its page 0 read by no walk: 20 of 30 records, complete: true, and `warrant check` said
// every guarantee held (it samples from the same wrong first page).
describe('warrant check reads the page before the first page number', () => {
  const items = collection(30)
  let up: TestUpstream
  before(async () => {
    up = await startUpstream((req, res) => {
      if (answerItemById(items, req, res)) return
      const page = Number(req.url.searchParams.get('page') ?? 0)
      const size = Number(req.url.searchParams.get('size') ?? 10)
      if (page < 0) return sendJson(res, 400, { error: 'page must not be negative' })
      sendJson(res, 200, { content: items.slice(page * size, page * size + size), totalElements: items.length })
    })
  })
  after(() => up.close())

  const check = (pagination: Record<string, unknown>, end: Record<string, unknown> = {}) => {
    const config = httpResource({ sources: [{ name: 'main', base_url: up.origin }], list: { path: '/items', items_path: 'content', page_size_param: 'size', pagination, ...end } })
    return checkResource({ name: 'items', config, connector: createHttpConnector({ resource: config }), pageSize: 10 })
  }
  const originOf = (report: Awaited<ReturnType<typeof check>>) => report.guarantees.find((g) => g.name === 'page_origin')

  // the walk itself reads page 0 at its start now, and refuses the source: fails closed, no longer unsafe
  test('a 0-based upstream read from page 1, with no total: fails closed, naming pagination.first (was verdict holds)', async () => {
    const report = await check({ style: 'page' })
    assert.equal(report.verdict, 'fails_closed', JSON.stringify(report.guarantees, null, 2))
    const g = originOf(report)
    assert.equal(g?.status, 'fails_closed', JSON.stringify(g))
    assert.deepEqual(g.config_keys, ['connector.list.pagination.first'])
    assert.match(g.detail, /page 0 answers 10 record\(s\).*set pagination\.first: 0/)
  })

  test('with a total the walk never reaches, it fails closed', async () => {
    assert.equal(originOf(await check({ style: 'page' }, { total_path: 'totalElements' }))?.status, 'fails_closed')
  })

  test('first: 0 holds (page -1 is refused)', async () => {
    const report = await check({ style: 'page', first: 0 })
    assert.equal(originOf(report)?.status, 'holds', JSON.stringify(originOf(report)))
    assert.equal(report.verdict, 'holds', JSON.stringify(report.guarantees, null, 2))
  })
})

// The other way round: a 1-based upstream under `first: 0`. json-server 0.17 answers `_page=0` with
// `slice(-limit, 0)`, nothing, so every walk ended on its empty first page, complete: true with no record (absence
// "proven" for every filter); the check read page -1, `slice(-2 * limit, -limit)`, found records there, and said
// "set pagination.first: -1". An empty first page with records on the page after it is the origin one too low.
describe('warrant check on page-number paging whose first page is empty and the next is not', () => {
  const items = collection(30)
  let up: TestUpstream
  before(async () => {
    up = await startUpstream((req, res) => {
      if (answerItemById(items, req, res)) return
      const page = Number(req.url.searchParams.get('_page') ?? 1)
      const limit = Number(req.url.searchParams.get('_limit') ?? 10)
      sendJson(res, 200, items.slice((page - 1) * limit, page * limit))
    })
  })
  after(() => up.close())

  const check = (first: number) => {
    const config = httpResource({ sources: [{ name: 'main', base_url: up.origin }], list: { path: '/items', items_path: '', page_size_param: '_limit', pagination: { style: 'page', param: '_page', first } } })
    return checkResource({ name: 'items', config, connector: createHttpConnector({ resource: config }), pageSize: 7 })
  }

  // the walk itself reads page 1 after the empty page 0 and is not complete there: fails closed, no longer unsafe
  test('first: 0 over a 1-based upstream fails closed, saying to set pagination.first: 1 (was: "set pagination.first: -1")', async () => {
    const g = (await check(0)).guarantees.find((x) => x.name === 'page_origin')
    assert.equal(g?.status, 'fails_closed', JSON.stringify(g))
    assert.deepEqual(g.config_keys, ['connector.list.pagination.first'])
    assert.match(g.detail, /page 0 answers no record.*page 1 answers 7/)
    assert.match(g.detail, /set pagination\.first: 1\b/)
    assert.doesNotMatch(g.detail, /first: -1/)
  })

  test('first: 1 holds', async () => {
    const report = await check(1)
    assert.equal(report.guarantees.find((x) => x.name === 'page_origin')?.status, 'holds')
  })
})
