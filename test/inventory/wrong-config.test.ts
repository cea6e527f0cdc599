import assert from 'node:assert/strict'
import { join } from 'node:path'
import { after, before, describe, test } from 'node:test'
import { parseConfig } from '../../src/config/index.js'
import { createHttpConnector } from '../../src/connectors/http/index.js'
import type { Filter } from '../../src/contract/index.js'
import { httpResource } from '../connectors/http/fixtures.js'
import { sendJson, startUpstream, type TestUpstream } from '../connectors/http/upstream-server.js'
import { startGatewayOn, type GatewayFixture } from '../support/gateway-fixture.js'
import { createTempDir, type TempDir } from '../support/stores.js'
import { walker } from './helpers.js'

/**
 * A wrong configuration of an http resource, against a real loopback upstream: every search (library and HTTP API)
 * and every selection freeze is either whole and right, or not complete with a reason that names the config line
 * to fix; never complete over records it lost, never a code that blames the data moving for a line of the config.
 */
const ITEMS = Array.from({ length: 23 }, (_, i) => ({ id: `r${String(i + 1).padStart(3, '0')}`, status: i % 3 === 0 ? 'past_due' : 'active', amount: i, version: 1 }))
const PAGE = 10

/** `/items`: cursor (or offset) pages of `limit`, with the total, this page's count and other numbers beside them. */
function answer(path: string, params: URLSearchParams): unknown {
  const from = Number(params.get('cursor') ?? params.get('offset') ?? 0)
  const limit = path === '/all' ? 1000 : Number(params.get('limit') ?? PAGE)
  let page = ITEMS.slice(from, from + limit)
  // a middle page holding fewer than asked, its next cursor past the records it left out
  if (path === '/short' && from === PAGE) page = page.slice(0, 5)
  // the same, where the upstream pages by offset: the walk asks again from where the short page ended
  if (path === '/short-offset' && from > 0 && from < 2 * PAGE) page = page.slice(0, 5)
  const next = from + limit < ITEMS.length ? String(from + limit) : null
  return { items: page, next_cursor: next, total: ITEMS.length, count: page.length, meta: { limit, big: 1000, stuck: 'abc' } }
}

const list = (extra: Record<string, unknown>, pagination: Record<string, unknown> = { style: 'cursor' }) => ({ path: '/items', page_size_param: 'limit', max_page_size: PAGE, pagination, ...extra })

interface Case {
  readonly connector: Record<string, unknown>
  readonly filter?: Filter
  /** the answer: complete with these ids, or not complete with a reason matching `names` (and never `notCode`) */
  readonly whole?: readonly string[]
  readonly names?: RegExp
}

const ALL = ITEMS.map((i) => i.id)
const CASES: Record<string, Case> = {
  total_path_absent: { connector: { list: list({ total_path: 'totals.all' }) }, names: /total_path "totals\.all" is missing/ },
  total_header_absent: { connector: { list: list({ total_header: 'X-Total-Count' }) }, names: /total_header X-Total-Count is missing from the answer/ },
  total_path_page_count: { connector: { list: list({ total_path: 'count' }) }, names: /total_path "count"/ },
  total_path_constant_below: { connector: { list: list({ total_path: 'meta.limit' }) }, names: /total_path "meta\.limit"/ },
  total_path_above: { connector: { list: list({ total_path: 'meta.big' }) }, names: /total_path "meta\.big"/ },
  total_path_page_count_offset: { connector: { list: list({ total_path: 'count' }, { style: 'offset', offset_param: 'offset' }) }, names: /total_path "count"/ },
  id_path_wrong: { connector: { list: list({}), field_paths: { id: 'uid' } }, names: /lacked declared field\(s\) id.*connector\.field_paths/ },
  version_path_wrong: { connector: { list: list({}), field_paths: { version: 'rev' } }, names: /version.*connector\.field_paths/ },
  items_path_absent: { connector: { list: list({ items_path: 'data' }) }, names: /no array at items_path "data"/ },
  items_path_object: { connector: { list: list({ items_path: 'meta' }) }, names: /no array at items_path "meta"/ },
  cursor_path_absent: { connector: { list: list({}, { style: 'cursor', next_cursor_path: 'next' }) }, names: /pagination\.next_cursor_path "next" holds no cursor/ },
  cursor_path_never_changes: { connector: { list: list({}, { style: 'cursor', next_cursor_path: 'meta.stuck' }) }, names: /same position again/ },
  page_size_ignored: { connector: { list: { ...list({}), path: '/all' } }, whole: ALL },
  page_size_ignored_offset: { connector: { list: { ...list({}, { style: 'offset', offset_param: 'offset' }), path: '/all' } }, whole: ALL },
  short_middle_page_with_total: { connector: { list: { ...list({ total_path: 'total' }), path: '/short' } }, names: /counts 23 .* received 18/ },
  short_middle_page_offset: { connector: { list: { ...list({ total_path: 'total' }, { style: 'offset', offset_param: 'offset' }), path: '/short-offset' } }, whole: ALL },
  filter_ignored: {
    connector: { list: list({ upstream_filters: [{ field: 'status', op: 'eq', param: 'status' }], total_path: 'total' }) },
    filter: { status: { eq: 'past_due' } },
    whole: ITEMS.filter((i) => i.status === 'past_due').map((i) => i.id),
  },
}

interface Answer {
  readonly complete: boolean
  readonly ids: readonly string[]
  readonly reasons: readonly { readonly code: string; readonly message?: string }[]
}

function judge(name: string, c: Case, surface: string, got: Answer): void {
  const said = `${name} (${surface}): ${JSON.stringify(got.reasons)}`
  if (c.whole) {
    assert.equal(got.complete, true, said)
    assert.deepEqual([...got.ids].sort(), [...c.whole], said)
    return
  }
  assert.equal(got.complete, false, `${name} (${surface}) was called complete with ${got.ids.length} record(s)`)
  assert.ok(got.reasons.some((r) => c.names!.test(r.message ?? '')), `${said}: no reason names the wrong setting (${c.names})`)
  // the data did not move: a code that says so blames the upstream for a line of the config
  assert.ok(!got.reasons.some((r) => r.code === 'SNAPSHOT_INVALIDATED'), `${said}: SNAPSHOT_INVALIDATED for a wrong config`)
}

describe('a wrong http resource configuration against a real loopback upstream', () => {
  let up: TestUpstream
  let dir: TempDir
  let gw: Omit<GatewayFixture, 'dir' | 'upstreamUrl' | 'storeUrl'>

  before(async () => {
    up = await startUpstream((req, res) => sendJson(res, 200, answer(req.url.pathname, req.url.searchParams)))
    dir = await createTempDir('warrant-wrong-config-')
    const resources = Object.fromEntries(
      Object.entries(CASES).map(([name, c]) => {
        const { list: l, ...rest } = c.connector
        return [
          name,
          {
            environment: { name: 'wrong-config' },
            connector: { kind: 'http', sources: [{ name: 'main', base_url: up.origin }], timeout_ms: 5000, get: { path: '/items/{id}' }, version: { from: 'field', field: 'version' }, list: l, ...rest },
            fields: { id: 'string', status: 'string', amount: 'number', version: 'integer' },
            review_fields: ['id', 'status'],
          },
        ]
      }),
    )
    gw = await startGatewayOn(parseConfig({ store: `sqlite:${join(dir.path, 'warrant.db')}`, resources }), { resources: Object.keys(resources) })
  })
  after(async () => {
    await gw?.close()
    await up?.close()
    await dir?.drop()
  })

  for (const [name, c] of Object.entries(CASES)) {
    test(`${name}: the library's searchAll`, async () => {
      const { list: l, ...rest } = c.connector
      const walk = walker(createHttpConnector({ resource: httpResource({ sources: [{ name: 'main', base_url: up.origin }], list: l, ...rest }) }))
      const envelope = await walk({ filter: c.filter ?? {}, pageSize: PAGE })
      judge(name, c, 'searchAll', { complete: envelope.complete, ids: envelope.items.map((i) => String(i.id)), reasons: envelope.incomplete_reasons })
    })

    test(`${name}: the HTTP API's search and selection freeze`, async () => {
      const resource = name
      const search = await gw.as('agent')('POST', `/v1/resources/${resource}/search`, { filter: c.filter ?? {}, page_size: PAGE }, { accept: 'application/json' })
      assert.equal(search.status, 200, JSON.stringify(search.body))
      judge(name, c, 'HTTP search', { complete: search.body.complete, ids: search.body.items.map((i: { id: string }) => i.id), reasons: search.body.incomplete_reasons })
      const made = await gw.as('agent')('POST', `/v1/resources/${resource}/selections`, { filter: c.filter ?? {} })
      assert.equal(made.status, 201, JSON.stringify(made.body))
      const records = await gw.as('agent')('GET', `/v1/selections/${made.body.selection_id}/records?limit=100`)
      judge(name, c, 'selection', { complete: made.body.complete, ids: records.body.records.map((r: { id: string }) => r.id), reasons: made.body.incomplete_reasons })
      if (!c.whole) assert.equal(made.body.committable, false)
    })
  }
})
