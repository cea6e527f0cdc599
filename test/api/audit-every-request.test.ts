import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { call, startDemoGateway, type GatewayFixture } from '../support/gateway-fixture.js'
import { STORE_KINDS } from '../support/stores.js'

for (const kind of STORE_KINDS) {
  describe(`every request leaves one audit row, refusals as refusals (${kind})`, () => {
    let fx: GatewayFixture
    before(async () => {
      fx = await startDemoGateway({ store: kind, count: 50 })
    })
    after(() => fx?.close())

    const lastRows = async (n: number) => (await fx.gateway.store.db.selectFrom('audit_events').selectAll().where('level', '=', 'run').orderBy('seq', 'desc').limit(n).execute()).reverse()
    const runCount = async () => Number((await fx.gateway.store.db.selectFrom('audit_events').select((eb) => eb.fn.countAll().as('n')).where('level', '=', 'run').executeTakeFirstOrThrow()).n)

    /** Sends one request and returns the one row it added. */
    async function oneRow(send: () => Promise<{ status: number }>) {
      const before = await runCount()
      const answer = await send()
      await fx.gateway.audit.flush()
      assert.equal(await runCount(), before + 1, 'exactly one run-level row per request')
      const [row] = await lastRows(1)
      return { answer, row: row!, summary: JSON.parse(row!.summary) as Record<string, any> }
    }

    test('a refused request with a number for an id leaves the chain verifiable', async () => {
      const { answer, summary } = await oneRow(() =>
        fx.as('agent')('POST', '/v1/resources/subscriptions/bulk-actions', { selection_id: 0, expected_digest: 'sha256:x', action: { type: 'pause_collection' } }, { 'idempotency-key': 'k-0' }),
      )
      assert.equal(answer.status, 400)
      assert.equal(summary.outcome, 'refused')
      assert.equal(summary.error, 'invalid_request')
      const verify = await fx.as('admin')('GET', '/v1/audit/verify')
      assert.equal(verify.body.ok, true, verify.body.message)
      assert.equal(verify.body.guarantee, 'signed', 'the demo config signs the chain with a generated key file')
    })

    test('a body carrying a lone surrogate in a key or value is recorded, and the chain verifies', async () => {
      const raw = '{"filter":{},"budget":{"max_items":5},"\\ud800junk":"\\udfff"}'
      const { summary } = await oneRow(() => fx.as('agent')('POST', '/v1/resources/subscriptions/search', raw, { 'content-type': 'application/json' }))
      assert.ok(summary.status >= 200)
      assert.equal((await fx.as('admin')('GET', '/v1/audit/verify')).body.ok, true)
    })

    test('no token, an unknown route, the MCP endpoint and a review page are each recorded', async () => {
      const noToken = await oneRow(() => call(fx.base, 'GET', '/v1/resources'))
      assert.equal(noToken.answer.status, 401)
      assert.equal(noToken.summary.error, 'unauthenticated')
      const unknown = await oneRow(() => fx.as('agent')('GET', '/v1/nothing-here'))
      assert.equal(unknown.answer.status, 404)
      assert.equal(unknown.summary.outcome, 'refused')
      const mcp = await oneRow(() =>
        call(fx.base, 'POST', '/mcp', { jsonrpc: '2.0', id: 1, method: 'tools/list' }, { authorization: `Bearer ${fx.tokens.agent}`, accept: 'application/json, text/event-stream' }),
      )
      assert.equal(mcp.answer.status, 200)
      assert.equal(mcp.row.surface, 'mcp')
      const page = await oneRow(() => call(fx.base, 'GET', '/review/sign-in'))
      assert.equal(page.row.surface, 'ui')
    })

    test('a filter on a denied field is stored with its name, never its value', async () => {
      const { answer, row } = await oneRow(() => fx.as('agent')('POST', '/v1/resources/subscriptions/search', { filter: { notes: 'customer threatened to sue' } }))
      assert.equal(answer.status, 400)
      assert.doesNotMatch(row.summary, /threatened/)
      assert.match(row.summary, /"notes":"\[redacted\]"/)
    })

    test('the ids a route answers with are on its row; a refusal keeps its error code (both read from the answer as the route gave it)', async () => {
      const created = await oneRow(() => fx.as('agent')('POST', '/v1/resources/subscriptions/selections', { filter: { status: 'past_due' } }))
      assert.equal(created.answer.status, 201)
      assert.match(created.row.selection_id ?? '', /^sel_/)
      assert.equal(created.row.selection_id, (created.answer as unknown as { body: { selection_id: string } }).body.selection_id)
      const plan = await oneRow(() => fx.as('agent')('POST', `/v1/selections/${created.row.selection_id}/plans`, { action: { type: 'pause_collection', params: { reason: 'audit ids' } } }))
      assert.equal(plan.row.plan_id, (plan.answer as unknown as { body: { plan_id: string } }).body.plan_id)
      assert.equal(plan.row.selection_id, created.row.selection_id, 'the path names the selection')
      const refused = await oneRow(() => fx.as('agent')('GET', '/v1/plans/pln_missing'))
      assert.equal(refused.answer.status, 404)
      assert.equal(refused.summary.error, 'not_found')
    })

    test("an agent's approval attempt is recorded as a refusal, never as an approval", async () => {
      const selection = await fx.as('agent')('POST', '/v1/resources/subscriptions/selections', { filter: { status: 'past_due' } })
      assert.equal(selection.status, 201)
      const plan = await fx.as('agent')('POST', `/v1/selections/${selection.body.selection_id}/plans`, { action: { type: 'pause_collection', params: { reason: 'audit test' } } })
      assert.ok(plan.status === 201 || plan.status === 200, JSON.stringify(plan.body))
      const { answer, row, summary } = await oneRow(() => fx.as('agent')('POST', `/v1/plans/${plan.body.plan_id}/approvals`, { decision: 'approve', expected_plan_digest: plan.body.plan_digest }))
      assert.equal(answer.status, 403)
      assert.equal(summary.outcome, 'refused')
      assert.equal(summary.refused_decision, 'approve')
      assert.equal(row.details === null ? undefined : JSON.parse(row.details).decision, undefined)
    })
  })
}
