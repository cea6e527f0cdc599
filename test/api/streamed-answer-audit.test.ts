import assert from 'node:assert/strict'
import http from 'node:http'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { parseConfig } from '../../src/config/index.js'
import { startGatewayOn, type GatewayFixture } from '../support/gateway-fixture.js'
import { createTempDir, createTestPostgresDatabase, STORE_KINDS, type TempDir, type TestDatabase } from '../support/stores.js'
import { sendJson, startUpstream, type TestUpstream } from '../connectors/http/upstream-server.js'

// A search's audit row says what the agent was answered: how many items, whether the listing was complete and
// why not, or that the client left or the connection was cut. It is written when the walk ends, before the
// answer's last bytes leave, so it follows every upstream call the walk made. On an HTTP upstream unlike the
// demo (cursor paging, string ids, one list that fails after two pages), on both stores.

const TOTAL = 1200
const record = (i: number) => ({ id: `doc/${String(i).padStart(5, '0')}`, state: i % 2 ? 'open' : 'closed', rev: 3 })

function page(res: http.ServerResponse, url: URL, total: number, failAt?: number) {
  const from = Number(url.searchParams.get('after') ?? 0)
  const limit = Number(url.searchParams.get('n') ?? 100)
  if (failAt !== undefined && from >= failAt) return sendJson(res, 503, { error: 'shard offline' })
  const items = Array.from({ length: Math.max(0, Math.min(limit, total - from)) }, (_, k) => record(from + k))
  sendJson(res, 200, { data: items, next: from + limit < total ? String(from + limit) : null })
}

function resource(origin: string, path: string) {
  return {
    environment: { name: 'docs-audit' },
    connector: {
      kind: 'http',
      sources: [{ name: 'docs', base_url: origin }],
      list: { path, items_path: 'data', page_size_param: 'n', pagination: { style: 'cursor', param: 'after', next_cursor_path: 'next' } },
      get: { path: `${path}/{id}` },
      version: { from: 'field', field: 'rev' },
      timeout_ms: 5000,
    },
    fields: { id: 'string', state: 'string', rev: 'integer' },
    review_fields: ['id', 'state'],
  }
}

for (const kind of STORE_KINDS) {
  describe(`a streamed search's audit row says how it ended (${kind} store, an HTTP upstream)`, () => {
    let upstream: TestUpstream
    let dir: TempDir
    let pgDb: TestDatabase | null = null
    let gw: Omit<GatewayFixture, 'dir' | 'upstreamUrl' | 'storeUrl'>

    before(async () => {
      upstream = await startUpstream(async (req, res) => {
        if (req.url.pathname === '/docs') return page(res, req.url, TOTAL)
        if (req.url.pathname === '/flaky') return page(res, req.url, TOTAL, 200)
        if (req.url.pathname === '/none') return sendJson(res, 200, { data: [], next: null })
        sendJson(res, 404, { error: 'no such list' })
      })
      dir = await createTempDir('warrant-stream-audit-')
      if (kind === 'postgres') pgDb = await createTestPostgresDatabase()
      const config = parseConfig({
        store: pgDb ? pgDb.url : `sqlite:${join(dir.path, 'warrant.db')}`,
        resources: Object.fromEntries(['docs', 'flaky', 'none'].map((name) => [name, resource(upstream.origin, `/${name}`)])),
      })
      gw = await startGatewayOn(config, { resources: ['docs', 'flaky', 'none'] })
    })
    after(async () => {
      await gw?.close()
      await upstream?.close()
      await pgDb?.drop()
      await dir?.drop()
    })

    const search = async (name: string, body: unknown) => {
      const response = await fetch(`${gw.base}/v1/resources/${name}/search`, {
        method: 'POST',
        headers: { authorization: `Bearer ${gw.tokens.agent}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      })
      return { status: response.status, body: await response.json() }
    }
    /** the run rows and call rows written so far, in chain order, read straight from the store (no flush) */
    const rows = async () => (await gw.gateway.store.db.selectFrom('audit_events').select(['seq', 'level', 'action', 'summary']).orderBy('seq').execute()).map((r) => ({ ...r, seq: Number(r.seq), summary: JSON.parse(r.summary) }))
    const searchRow = async (path: string) => (await rows()).filter((r) => r.level === 'run' && r.summary.path === path).at(-1)

    it('a whole listing: the row, already durable when the last byte arrives, names its items and says complete', async () => {
      const answer = await search('docs', { filter: {}, page_size: 100, budget: { max_items: 5000 } })
      assert.equal(answer.status, 200)
      assert.equal(answer.body.items.length, TOTAL)
      // no flush: the row was committed before the answer's end left the gateway
      const row = await searchRow('/v1/resources/docs/search')
      assert.ok(row, 'the search has its row once its answer has arrived')
      assert.equal(row.summary.outcome, 'ok')
      assert.deepEqual(row.summary.answer, { items: TOTAL, complete: true, incomplete: [] })
      // written at the walk's end: after every page's call row
      const calls = (await rows()).filter((r) => r.level === 'call' && r.seq < row.seq && r.action.startsWith('GET '))
      assert.ok(calls.length >= TOTAL / 100, `${calls.length} page reads precede the row`)
    })

    it('a listing cut by its budget: not complete, with the reason code', async () => {
      const answer = await search('docs', { filter: {}, page_size: 100, budget: { max_items: 200 } })
      assert.equal(answer.body.complete, false)
      const row = await searchRow('/v1/resources/docs/search')
      assert.deepEqual(row?.summary.answer, { items: 200, complete: false, incomplete: ['CLIENT_LIMIT_REACHED'] })
    })

    it('an upstream that fails after two pages: the row says the agent got a partial listing and why', async () => {
      const answer = await search('flaky', { filter: {}, page_size: 100 })
      assert.equal(answer.status, 200)
      assert.equal(answer.body.items.length, 200)
      const row = await searchRow('/v1/resources/flaky/search')
      assert.equal(row?.summary.answer.items, 200)
      assert.equal(row?.summary.answer.complete, false)
      assert.deepEqual(row?.summary.answer.incomplete, [...new Set(answer.body.incomplete_reasons.map((r: { code: string }) => r.code))])
      assert.ok(row.summary.answer.incomplete.length > 0)
    })

    it('an empty listing answered whole: no items, and complete (so the absence is proven)', async () => {
      const answer = await search('none', { filter: {} })
      assert.equal(answer.body.items.length, 0)
      await gw.gateway.audit.flush()
      const row = await searchRow('/v1/resources/none/search')
      assert.deepEqual(row?.summary.answer, { items: 0, complete: true, incomplete: [] })
    })

    it('a refused search keeps no answer summary, and the chain verifies', async () => {
      const answer = await search('docs', { filter: { nope: 1 } })
      assert.equal(answer.status, 400)
      await gw.gateway.audit.flush()
      const row = await searchRow('/v1/resources/docs/search')
      assert.equal(row?.summary.outcome, 'refused')
      assert.equal(row?.summary.answer, undefined)
      const verify = await fetch(`${gw.base}/v1/audit/verify`, { headers: { authorization: `Bearer ${gw.tokens.admin}` } })
      assert.equal((await verify.json()).ok, true)
    })
  })
}
