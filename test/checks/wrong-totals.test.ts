import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { checkResource } from '../../src/checks/index.js'
import { createHttpConnector } from '../../src/connectors/http/index.js'
import { collection, httpResource } from '../connectors/http/fixtures.js'
import { sendJson, startUpstream, type TestUpstream } from '../connectors/http/upstream-server.js'

// A cursor list whose answers carry the real total beside this page's count and the page size. total_path pointed at
// either is a count the records already read exceed: `warrant check` says so from a sample that does not reach the
// end, naming total_path, before any walk meets it (a walk, too, refuses it: test/inventory/wrong-config.test.ts).
describe('check: a total_path at a number that is not the total (real loopback upstream)', () => {
  const items = collection(50)
  let upstream: TestUpstream
  before(async () => {
    upstream = await startUpstream((req, res) => {
      const from = Number(req.url.searchParams.get('cursor') ?? 0)
      const limit = Number(req.url.searchParams.get('limit') ?? 10)
      const page = items.slice(from, from + limit)
      sendJson(res, 200, { items: page, next_cursor: from + limit < items.length ? String(from + limit) : null, total: items.length, count: page.length, limit })
    })
  })
  after(() => upstream.close())

  const check = (totalPath: string) => {
    const config = httpResource({ sources: [{ name: 'main', base_url: upstream.origin }], list: { page_size_param: 'limit', total_path: totalPath, pagination: { style: 'cursor' } } })
    return checkResource({ name: 'items', config, connector: createHttpConnector({ resource: config }), pages: 3, pageSize: 10 })
  }

  for (const path of ['count', 'limit'])
    test(`total_path "${path}": totals fails closed, naming it, from three pages of fifty records`, async () => {
      const totals = (await check(path)).guarantees.find((g) => g.name === 'totals')!
      assert.equal(totals.status, 'fails_closed', totals.detail)
      assert.match(totals.detail, /total says 10, yet the pages read hold 30/)
      assert.ok(totals.config_keys.includes('connector.list.total_path'))
    })

  test('total_path "total" (the count of the list): not judged wrong from a sample short of the end', async () => {
    const totals = (await check('total')).guarantees.find((g) => g.name === 'totals')!
    assert.notEqual(totals.status, 'fails_closed', totals.detail)
  })

  test('total_path at a member no answer has: totals fails closed, naming it', async () => {
    const totals = (await check('meta.total')).guarantees.find((g) => g.name === 'totals')!
    assert.equal(totals.status, 'fails_closed', totals.detail)
    assert.match(totals.detail, /total_path "meta\.total" is missing from the answer/)
    assert.ok(totals.config_keys.includes('connector.list.total_path'))
  })
})
