import assert from 'node:assert/strict'
import { join } from 'node:path'
import { after, before, describe, test } from 'node:test'
import { parseConfig } from '../../src/config/index.js'
import { sendJson, startUpstream, type TestUpstream } from '../connectors/http/upstream-server.js'
import { startGatewayOn, type GatewayFixture } from '../support/gateway-fixture.js'
import { STORE_KINDS, createTempDir, createTestPostgresDatabase, type TempDir, type TestDatabase } from '../support/stores.js'
import { until } from '../support/until.js'

const COUNT = 30
const PAGE = 10
type Gw = Omit<GatewayFixture, 'dir' | 'upstreamUrl' | 'storeUrl'>

/**
 * A search was authorised once, at its start: a token revoked (or its principal disabled, or the resource taken out
 * of its scope) while a long walk ran went on receiving records for up to the walk's deadline (5 minutes). The
 * walk asks again, before handing over each page once a second has passed since the last ask; refused, the answer
 * is cut (over HTTP: no envelope end, so no JSON reader takes it for an answer) or is the refusal (MCP).
 */
for (const kind of STORE_KINDS)
  describe(`a search whose token stops holding while it walks (${kind} store)`, () => {
    let dir: TempDir
    let pgStore: TestDatabase | undefined
    let up: TestUpstream
    let gw: Gw
    /** page requests past the first wait for this */
    let release: () => void = () => undefined
    let gate: Promise<void> = Promise.resolve()
    const hold = () => (gate = new Promise<void>((resolve) => (release = resolve)))

    before(async () => {
      dir = await createTempDir('warrant-search-authority-')
      pgStore = kind === 'postgres' ? await createTestPostgresDatabase() : undefined
      up = await startUpstream(async (req, res) => {
        const from = Number(req.url.searchParams.get('cursor') ?? 0)
        if (from > 0) await gate
        const items = Array.from({ length: Math.max(0, Math.min(PAGE, COUNT - from)) }, (_, k) => ({ id: `d${String(from + k).padStart(3, '0')}`, status: 'open', version: 1 }))
        sendJson(res, 200, { items, next_cursor: from + PAGE < COUNT ? String(from + PAGE) : null })
      })
      const config = parseConfig({
        store: pgStore?.url ?? `sqlite:${join(dir.path, 'warrant.db')}`,
        resources: {
          docs: {
            environment: { name: 'docs-staging' },
            connector: { kind: 'http', sources: [{ name: 'main', base_url: up.origin }], list: { path: '/docs', page_size_param: 'limit', pagination: { style: 'cursor' } }, get: { path: '/docs/{id}' }, version: { from: 'field', field: 'version' }, timeout_ms: 10_000 },
            fields: { id: 'string', status: 'string', version: 'integer' },
            review_fields: ['id', 'status'],
          },
        },
      })
      gw = await startGatewayOn(config, { resources: ['docs'] })
    })
    after(async () => {
      release()
      await gw?.close()
      await up?.close()
      await pgStore?.drop()
      await dir?.drop()
    })

    /**
     * Starts a search as `token` and waits until its second page is asked of the upstream (the first handed over);
     * the answer comes wrapped, since an async function returning a promise would wait for it.
     */
    async function searchHeldAtPage2(token: string, path: string, body: unknown): Promise<{ readonly answer: Promise<Response> }> {
      hold()
      const asked = up.seen.length
      const answer = fetch(`${gw.base}${path}`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body: JSON.stringify(body) })
      await until(() => up.seen.slice(asked).some((r) => r.url.searchParams.get('cursor') === String(PAGE)), 'the walk asking for page 2')
      return { answer }
    }

    const newAgent = async (name: string) => (await gw.gateway.principals.issue({ name, role: 'agent', scopes: { resources: ['docs'], actions: '*' } })).token

    test('left alone, the walk ends complete with every record (the control)', async () => {
      const { answer } = await searchHeldAtPage2(await newAgent(`steady-${kind}`), '/v1/resources/docs/search', { filter: {}, page_size: PAGE })
      await new Promise((r) => setTimeout(r, 1100))
      release()
      const body = await (await answer).json()
      assert.equal(body.complete, true)
      assert.equal(body.items.length, COUNT)
    })

    test('HTTP API: the token revoked after page 1: the answer is cut, never complete, not every record', async () => {
      const token = await newAgent(`revoked-${kind}`)
      const { answer } = await searchHeldAtPage2(token, '/v1/resources/docs/search', { filter: {}, page_size: PAGE })
      const listed = (await gw.gateway.principals.list()).find((t) => t.name === `revoked-${kind}`)!
      await gw.gateway.principals.revoke(listed.token_id)
      await new Promise((r) => setTimeout(r, 1100))
      release()
      const response = await answer
      assert.equal(response.status, 200, 'the first page was already on its way')
      const text = await response.text().catch((error: Error) => `cut: ${error.message}`)
      assert.ok(!text.includes('"complete"'), `no envelope end: ${text.slice(-200)}`)
      assert.ok((text.match(/"id":/g) ?? []).length < COUNT, 'not every record')
      await gw.gateway.audit.flush()
      const rows = (await gw.gateway.store.db.selectFrom('audit_events').select(['summary']).where('action', '=', 'POST /v1/resources/:resource/search').orderBy('seq').execute()).map((r) => JSON.parse(r.summary))
      assert.deepEqual({ ...rows.at(-1), body: undefined }, { answer: { items: PAGE }, body: undefined, outcome: 'failed', stopped: 'authority_lapsed', path: '/v1/resources/docs/search', status: 200 })
    })

    test('MCP: the principal disabled after page 1: the tool answers the refusal, not the records', async () => {
      const name = `disabled-${kind}`
      const { answer } = await searchHeldAtPage2(await newAgent(name), '/mcp', { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'search', arguments: { resource: 'docs', filter: {}, page_size: PAGE } } })
      await gw.gateway.principals.disable(name)
      await new Promise((r) => setTimeout(r, 1100))
      release()
      const text = await (await answer).text()
      const message = JSON.parse(text.startsWith('{') ? text : text.slice(text.indexOf('{'), text.lastIndexOf('}') + 1))
      assert.equal(message.result?.isError, true, text.slice(0, 400))
      assert.match(JSON.stringify(message.result.content), /disabled/)
      assert.ok(!JSON.stringify(message.result).includes('"d029"'), 'no record of the last page')
    })
  })
