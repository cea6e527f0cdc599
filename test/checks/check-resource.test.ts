import assert from 'node:assert/strict'
import { after, before, beforeEach, describe, test } from 'node:test'
import { checkResource, type CheckReport } from '../../src/checks/index.js'
import { createHttpConnector } from '../../src/connectors/http/index.js'
import { callLog, collection, httpResource, type Item } from '../connectors/http/fixtures.js'
import { sendJson, startUpstream, type TestUpstream } from '../connectors/http/upstream-server.js'
import { createCliWorkspace } from '../support/cli-config.js'

const statusOf = (report: CheckReport, name: string) => report.guarantees.find((g) => g.name === name)

// `warrant check` against real upstreams shaped unlike the demo, each with one thing wrong: the probe must
// name the broken guarantee and the config line, and its verdict must never be better than the truth.
describe('checkResource against loopback upstreams', () => {
  let items: Item[]
  let mode: 'honest' | 'renamed' | 'shuffled' | 'wrong_get' | 'bad_total' = 'honest'
  // how the list answers ?ids=a,b: as a read by ids, ignoring the parameter (its page), or with summaries
  let batch: 'by_ids' | 'ignores' | 'summary' = 'by_ids'
  let upstream: TestUpstream
  before(async () => {
    upstream = await startUpstream((req, res) => {
      const get = /^\/items\/([^/]+)$/.exec(req.url.pathname)
      if (get) {
        const at = items.findIndex((i) => i.id === decodeURIComponent(get[1]!))
        if (at < 0) return sendJson(res, 404, { error: 'not found' })
        return sendJson(res, 200, mode === 'wrong_get' ? items[(at + 1) % items.length] : items[at])
      }
      const asked = req.url.searchParams.get('ids')
      if (asked !== null && batch !== 'ignores') {
        const found = items.filter((i) => asked.split(',').includes(i.id))
        return sendJson(res, 200, { items: batch === 'summary' ? found.map((i) => ({ ...i, summary: true })) : found })
      }
      const from = Number(req.url.searchParams.get('offset') ?? 0)
      const size = Number(req.url.searchParams.get('limit') ?? 10)
      let view = items
      if (mode === 'shuffled') view = [...items].sort(() => Math.random() - 0.5)
      let page: unknown[] = view.slice(from, from + size)
      if (mode === 'renamed') page = page.map((i) => {
        const { status, ...rest } = i as Item
        return { ...rest, state: status }
      })
      sendJson(res, 200, { items: page, total: mode === 'bad_total' ? items.length + 5 : items.length })
    })
  })
  after(() => upstream?.close())
  beforeEach(() => {
    items = collection(25)
    mode = 'honest'
    batch = 'by_ids'
  })

  const check = (connector: Record<string, unknown> = {}, extra: Record<string, unknown> = {}) => {
    const config = httpResource(
      {
        sources: [{ name: 'main', base_url: upstream.origin }],
        list: { path: '/items', page_size_param: 'limit', pagination: { style: 'offset' }, total_path: 'total' },
        ...connector,
      },
      {
        actions: { pause: { set: { status: 'paused' }, write: { method: 'PATCH', path: '/items/{id}' } } },
        ...extra,
      },
    )
    return checkResource({ name: 'items', config, connector: createHttpConnector({ resource: config }), pages: 5, pageSize: 10 })
  }

  test('an honest upstream: every guarantee holds, verdict holds', async () => {
    const report = await check()
    assert.equal(report.verdict, 'holds', JSON.stringify(report.guarantees, null, 2))
    assert.equal(statusOf(report, 'totals')?.status, 'holds')
    assert.equal(statusOf(report, 'read_by_id')?.status, 'holds')
  })

  const batchCases = [
    ['by_ids', 'holds', [], /2 records read in 1 request/],
    ['ignores', 'fails_closed', ['connector.get.batch.ids_param'], /answered records that were not asked for: the upstream ignores "ids"/],
    ['summary', 'fails_closed', ['connector.get.batch.path', 'connector.get.batch.record_path'], /not the same JSON as the record read alone/],
  ] as const
  for (const [answers, status, keys, detail] of batchCases)
    test(`get.batch over a list that ${answers === 'by_ids' ? 'answers by ids: holds' : answers === 'ignores' ? 'ignores the ids parameter' : 'answers summaries'}${status === 'holds' ? '' : ': fails closed, naming the config line; the records read are right all the same'}`, async () => {
      batch = answers
      const config = httpResource({
        sources: [{ name: 'main', base_url: upstream.origin }],
        list: { path: '/items', page_size_param: 'limit', pagination: { style: 'offset' }, total_path: 'total' },
        get: { path: '/items/{id}', batch: { path: '/items', ids_param: 'ids' } },
      })
      const log = callLog()
      const report = await checkResource({ name: 'items', config, connector: createHttpConnector({ resource: config, onCall: log.onCall }), calls: log.calls, pages: 5, pageSize: 10 })
      const g = statusOf(report, 'read_by_ids_batch')!
      assert.deepEqual([g.status, g.config_keys], [status, keys], g.detail)
      assert.match(g.detail, detail)
      assert.equal(statusOf(report, 'read_by_id')?.status, 'holds', 'whatever the batch answered, the records read are the listed ones')
      assert.equal(report.verdict, status)
      // without the calls, the probe cannot tell what the batch answered
      const blind = await checkResource({ name: 'items', config, connector: createHttpConnector({ resource: config }), pages: 5, pageSize: 10 })
      assert.equal(statusOf(blind, 'read_by_ids_batch')?.status, 'unknown')
    })

  test('a field the upstream calls by another name: declared_fields broken, names the field and the config line', async () => {
    mode = 'renamed'
    const report = await check()
    const g = statusOf(report, 'declared_fields')!
    assert.equal(g.status, 'fails_closed')
    assert.match(g.detail, /25 of 25 records cannot be judged \(absent: "status"\)/)
    assert.deepEqual(g.config_keys, ['connector.field_paths.status'])
    assert.notEqual(report.verdict, 'holds')
  })

  test('an order that changes between reads: stable_order broken', async () => {
    mode = 'shuffled'
    const report = await check()
    assert.equal(statusOf(report, 'stable_order')?.status, 'fails_closed')
    assert.notEqual(report.verdict, 'holds')
  })

  test('a read by id that answers another record: read_by_id broken', async () => {
    mode = 'wrong_get'
    const report = await check()
    const g = statusOf(report, 'read_by_id')!
    assert.equal(g.status, 'fails_closed')
    assert.match(g.detail, /record whose id is "r002"/)
  })

  test('a total that disagrees with the walk: totals broken, names total_path', async () => {
    mode = 'bad_total'
    const report = await check()
    const g = statusOf(report, 'totals')!
    assert.equal(g.status, 'fails_closed')
    assert.match(g.detail, /total says 30, the (walk received|pages ran dry after) 25/)
    assert.deepEqual(g.config_keys, ['connector.list.total_path', 'connector.list.total_kind'])
  })

  // this upstream pages by offset, answers {items, total} and has no next cursor: paging configs that misread it
  const misreadPaging = [
    ['a page parameter it ignores', { style: 'page' }, /the same page again; is pagination.param "page"/],
    ['a next cursor it never sends', { style: 'cursor' }, /pagination.next_cursor_path "next_cursor" holds no cursor/],
  ] as const
  for (const [what, pagination, detail] of misreadPaging)
    test(`paging by ${what}: pages_read fails closed, naming the config key`, async () => {
      const report = await check({ list: { path: '/items', page_size_param: 'limit', pagination, total_path: 'total' } })
      const g = statusOf(report, 'pages_read')!
      assert.equal(g.status, 'fails_closed', g.detail)
      assert.match(g.detail, detail)
      assert.notEqual(report.verdict, 'holds')
    })

  test('a write that does not send the version: unsafe, names if_match', async () => {
    const report = await check({}, { actions: { pause: { set: { status: 'paused' }, write: { method: 'PATCH', path: '/items/{id}', if_match: false } } } })
    const g = statusOf(report, 'conditional_writes.pause')!
    assert.equal(g.status, 'unsafe')
    assert.deepEqual(g.config_keys, ['actions.pause.write.if_match'])
    assert.equal(report.verdict, 'unsafe')
  })

  // README: `warrant check` exits 4 "when it could not tell (an upstream did not answer)". A newcomer who has not
  // started the upstream yet must not be sent to edit a config that is right (pages_read, totals "BROKEN"), nor
  // told the order is stable when no page was read.
  test('an upstream that is down: could not tell (unknown), nothing claimed to hold or to be broken on data it never saw', async () => {
    const report = await check({ sources: [{ name: 'main', base_url: 'http://127.0.0.1:9' }], timeout_ms: 2000 })
    const pages = statusOf(report, 'pages_read')!
    assert.equal(pages.status, 'unknown', pages.detail)
    assert.match(pages.detail, /could not be reached/)
    assert.match(pages.detail, /start the upstream/)
    for (const name of ['declared_fields', 'unique_ids', 'stable_order', 'totals', 'read_by_id', 'versions']) assert.equal(statusOf(report, name)?.status, 'unknown', name)
    assert.equal(report.verdict, 'unknown')
  })
})

describe('warrant check (a real subprocess)', () => {
  let ws: Awaited<ReturnType<typeof createCliWorkspace>>
  before(async () => {
    ws = await createCliWorkspace({ count: 500 })
  })
  after(() => ws?.drop())

  test('the demo resource: a table of guarantees, exit 0', async () => {
    const out = await ws.warrant(['check', 'subscriptions'])
    assert.equal(out.code, 0, out.stdout + out.stderr)
    assert.match(out.stdout, /^check subscriptions \(sql\): every guarantee holds/)
    for (const name of ['pages_read', 'declared_fields', 'unique_ids', 'stable_order', 'read_by_id', 'versions', 'id_column', 'conditional_writes']) assert.match(out.stdout, new RegExp(`^${name}\\s+holds`, 'm'))
  })

  test('a sql upstream that cannot be reached: exit 4 (could not tell), not 5', async () => {
    const down = await createCliWorkspace({ count: 10, edit: (raw) => { raw.resources.subscriptions.connector.url = 'postgres://postgres@127.0.0.1:9/warrant_absent' } })
    try {
      const out = await down.warrant(['check', 'subscriptions'])
      assert.equal(out.code, 4, out.stdout + out.stderr)
      assert.match(out.stdout, /^check subscriptions \(sql\): some guarantees could not be checked/)
      assert.match(out.stdout, /^pages_read\s+unknown\s+.*start the upstream/m)
      assert.doesNotMatch(out.stdout, /BROKEN|connector\.sources/)
    } finally {
      await down.drop()
    }
  })

  test('an unknown resource: exit 2 with the known ones', async () => {
    const out = await ws.warrant(['check', 'nope'])
    assert.equal(out.code, 2)
    assert.match(out.stderr, /known resources: subscriptions/)
  })
})
