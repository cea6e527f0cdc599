import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { checkResource } from '../../src/checks/index.js'
import { createHttpConnector } from '../../src/connectors/http/index.js'
import { collection, httpResource, stripeLikeList } from '../connectors/http/fixtures.js'
import { sendJson, startUpstream, type TestUpstream } from '../connectors/http/upstream-server.js'

// A Stripe-like list (3 records a page) that applies `amount_gte` and silently ignores `status`. Warrant re-checks every
// record, so answers stay right, and `upstream_filters.status.eq` used to say only "holds": the operator never learnt
// that the parameter does nothing, that every walk with it reads every record, and that a filtered total counts them.
// Now it is a warning naming the config line; the clause the upstream applies still holds.
describe('check: a filter parameter the upstream ignores (real loopback upstream)', () => {
  const items = collection(12)
  let upstream: TestUpstream
  before(async () => {
    upstream = await startUpstream((req, res) => {
      const q = req.url.searchParams
      const min = q.get('amount_gte')
      const rows = min === null ? items : items.filter((i) => i.amount >= Number(min))
      const after = q.get('starting_after')
      const from = after === null ? 0 : rows.findIndex((i) => i.id === after) + 1
      const limit = Math.min(Number(q.get('limit') ?? 10), 3)
      sendJson(res, 200, { data: rows.slice(from, from + limit), has_more: from + limit < rows.length, total_count: rows.length })
    })
  })
  after(() => upstream.close())

  test('the ignored clause is a warning naming its config line; the applied one holds', async () => {
    const config = httpResource({
      sources: [{ name: 'main', base_url: upstream.origin }],
      list: stripeLikeList({
        upstream_filters: [
          { field: 'status', op: 'eq', param: 'status' },
          { field: 'amount', op: 'gte', param: 'amount_gte' },
        ],
      }),
    })
    const report = await checkResource({ name: 'items', config, connector: createHttpConnector({ resource: config }), pages: 10, pageSize: 10 })
    const status = report.guarantees.find((g) => g.name === 'upstream_filters.status.eq')!
    assert.equal(status.status, 'warning', status.detail)
    assert.match(status.detail, /also sent \d+ record\(s\) that do not match it/)
    assert.deepEqual(status.config_keys, ['connector.list.upstream_filters[0]'])
    const amount = report.guarantees.find((g) => g.name === 'upstream_filters.amount.gte')!
    assert.equal(amount.status, 'holds', amount.detail)
  })
})
