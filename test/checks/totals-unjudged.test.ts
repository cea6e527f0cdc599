import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { checkResource, type CheckReport } from '../../src/checks/index.js'
import { createHttpConnector } from '../../src/connectors/http/index.js'
import { collection, httpResource, stripeLikeList } from '../connectors/http/fixtures.js'
import { sendJson, startUpstream, type TestUpstream } from '../connectors/http/upstream-server.js'

const statusOf = (report: CheckReport, name: string) => report.guarantees.find((g) => g.name === name)

// A Stripe-like list (`{data, has_more, total_count}`, `starting_after` the last id, at most 3 records a page) whose
// total_count is right, and one of whose records lacks a declared field. That record cannot be judged and is counted
// under declared_fields (SHAPE_MISMATCH). The total counts what the upstream sent, and the probe received all of it:
// `totals` holds. Held against the judged records only, it was BROKEN, naming total_path and total_kind, and sent the
// operator to remove a correct total, the one thing that shows an upstream cutting its answers short.
describe('check: totals over a walk holding a record that cannot be judged (real loopback upstream)', () => {
  let short = 0
  const items = collection(10).map((item, i) => (i === 4 ? { id: item.id, amount: item.amount, version: item.version } : item))
  let upstream: TestUpstream
  before(async () => {
    upstream = await startUpstream((req, res) => {
      const after = req.url.searchParams.get('starting_after')
      const served = items.slice(0, items.length - short)
      const from = after === null ? 0 : served.findIndex((i) => i.id === after) + 1
      const limit = Math.min(Number(req.url.searchParams.get('limit') ?? 10), 3)
      sendJson(res, 200, { data: served.slice(from, from + limit), has_more: from + limit < served.length, total_count: items.length })
    })
  })
  after(() => upstream.close())

  const check = () => {
    const config = httpResource({
      sources: [{ name: 'main', base_url: upstream.origin }],
      list: stripeLikeList(),
    })
    return checkResource({ name: 'items', config, connector: createHttpConnector({ resource: config }), pages: 10, pageSize: 10 })
  }

  test('the record that cannot be judged is declared_fields\' finding; the total held: holds', async () => {
    short = 0
    const report = await check()
    assert.equal(statusOf(report, 'declared_fields')?.status, 'fails_closed')
    assert.match(statusOf(report, 'declared_fields')!.detail, /1 of 10 records cannot be judged \(absent: "status"\)/)
    const totals = statusOf(report, 'totals')!
    assert.equal(totals.status, 'holds', totals.detail)
  })

  test('an upstream that sends fewer records than its total: totals still broken', async () => {
    short = 2
    const report = await check()
    const totals = statusOf(report, 'totals')!
    assert.equal(totals.status, 'fails_closed')
    assert.match(totals.detail, /total says 10, the walk received 8/)
  })
})
