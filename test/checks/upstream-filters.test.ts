import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { checkResource } from '../../src/checks/index.js'
import type { Guarantee } from '../../src/checks/guarantee.js'
import { createHttpConnector } from '../../src/connectors/http/index.js'
import { collection, httpResource } from '../connectors/http/fixtures.js'
import { sendJson, startUpstream, type TestUpstream } from '../connectors/http/upstream-server.js'

/**
 * Filters the config sends upstream (`upstream_filters`, `filter_params`) were never tried by `warrant check`.
 * Warrant re-checks every record that comes back, which removes extra records but cannot restore one the upstream
 * left out: over an upstream that applies only the first value of `status=a,b` (a common "one value per param"
 * API), `status in [active, past_due]` answered 20 of 30 with complete: true, and the check said holds with no
 * line about the filter. Now each delegated clause is tried with values from the sampled records, and a sampled
 * match that does not come back makes it unsafe, naming the config line.
 */
const ITEMS = collection(30) // every third past_due, the rest active; amount 0, 10, … 290

type Mode = 'honest' | 'first_value_only' | 'gte_as_gt' | 'refuses_filters'
let mode: Mode = 'honest'

describe('warrant check tries each filter the upstream applies (real loopback upstream)', () => {
  let up: TestUpstream
  before(async () => {
    up = await startUpstream((req, res) => {
      const get = /^\/items\/([^/]+)$/.exec(req.url.pathname)
      if (get) return sendJson(res, 200, ITEMS.find((i) => i.id === get[1]))
      const q = req.url.searchParams
      const from = Number(q.get('offset') ?? 0)
      const size = Number(q.get('limit') ?? 10)
      const status = q.get('status')
      const min = q.get('min_amount')
      const only = q.get('only_status')
      if (mode === 'refuses_filters' && (status !== null || min !== null)) return sendJson(res, 400, { error: 'unknown parameter' })
      let view = ITEMS
      if (status !== null) {
        const wanted = mode === 'first_value_only' ? [status.split(',')[0]] : status.split(',')
        view = view.filter((i) => wanted.includes(i.status))
      }
      if (only !== null) view = view.filter((i) => i.status === only)
      if (min !== null) view = view.filter((i) => (mode === 'gte_as_gt' ? i.amount > Number(min) : i.amount >= Number(min)))
      sendJson(res, 200, { items: view.slice(from, from + size) })
    })
  })
  after(() => up.close())

  const check = async (list: Record<string, unknown> = {}): Promise<{ verdict: string; guarantees: readonly Guarantee[] }> => {
    const c = httpResource({
      sources: [{ name: 'main', base_url: up.origin }],
      list: {
        path: '/items',
        page_size_param: 'limit',
        pagination: { style: 'offset' },
        upstream_filters: [
          { field: 'status', op: 'in', param: 'status', encoding: 'comma' },
          { field: 'amount', op: 'gte', param: 'min_amount' },
        ],
        ...list,
      },
    })
    return checkResource({ name: 'items', config: c, connector: createHttpConnector({ resource: c }), pages: 3, pageSize: 10 })
  }
  const line = (report: { guarantees: readonly Guarantee[] }, name: string): Guarantee => {
    const g = report.guarantees.find((x) => x.name === name)
    assert.ok(g, `no ${name} line: ${report.guarantees.map((x) => x.name).join(', ')}`)
    return g
  }

  test('an upstream applying only the first value of a comma list: unsafe, naming the clause', async () => {
    mode = 'first_value_only'
    const report = await check()
    const g = line(report, 'upstream_filters.status.in')
    assert.equal(g.status, 'unsafe', g.detail)
    assert.deepEqual(g.config_keys, ['connector.list.upstream_filters[0]'])
    assert.match(g.detail, /did not come back/)
    assert.equal(line(report, 'upstream_filters.amount.gte').status, 'holds')
    assert.equal(report.verdict, 'unsafe')
  })

  test('gte applied as gt: the records on the bound are left out, unsafe', async () => {
    mode = 'gte_as_gt'
    const report = await check()
    const g = line(report, 'upstream_filters.amount.gte')
    assert.equal(g.status, 'unsafe', g.detail)
    assert.deepEqual(g.config_keys, ['connector.list.upstream_filters[1]'])
    assert.equal(line(report, 'upstream_filters.status.in').status, 'holds')
  })

  test('an upstream that applies each clause as declared: holds, and the line says what was tried', async () => {
    mode = 'honest'
    const report = await check({ filter_params: { status: 'only_status' }, upstream_filters: [{ field: 'status', op: 'in', param: 'status', encoding: 'comma' }, { field: 'amount', op: 'gte', param: 'min_amount' }] })
    for (const name of ['upstream_filters.status.in', 'upstream_filters.amount.gte', 'upstream_filters.status.eq']) assert.equal(line(report, name).status, 'holds', line(report, name).detail)
    assert.match(line(report, 'upstream_filters.status.in').detail, /status in \["active","past_due"\]: each of the 30 sampled/)
    assert.equal(report.verdict, 'holds')
  })

  test('an upstream that refuses the filter parameter: fails closed (a search with it is not complete)', async () => {
    mode = 'refuses_filters'
    const report = await check()
    const g = line(report, 'upstream_filters.status.in')
    assert.equal(g.status, 'fails_closed', g.detail)
    assert.deepEqual(g.config_keys, ['connector.list.upstream_filters[0]'])
  })

  test('no filter sent upstream: one line, not applicable', async () => {
    mode = 'honest'
    const report = await check({ upstream_filters: [] })
    assert.equal(line(report, 'upstream_filters').status, 'not_applicable')
    assert.equal(report.verdict, 'holds')
  })
})
