import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { parseFilterTerms } from '../../src/cli/parse-filter.js'
import { call, startDemoGateway, type GatewayFixture } from '../support/gateway-fixture.js'
import { STORE_KINDS } from '../support/stores.js'

for (const kind of STORE_KINDS) {
  describe(`the door (${kind})`, () => {
    let fx: GatewayFixture
    let operationId: string
    let planDigest: string
    let planId: string
    let narrow: string // an agent scoped to subscriptions but no action
    let otherAgent: string // another agent principal with every action
    const key = `door-${kind}`
    before(async () => {
      fx = await startDemoGateway({ store: kind, count: 80 })
      narrow = (await fx.gateway.principals.issue({ name: 'reader-agent', role: 'agent', scopes: { resources: ['subscriptions'], actions: [] } })).token
      otherAgent = (await fx.gateway.principals.issue({ name: 'other-agent', role: 'agent', scopes: { resources: ['subscriptions'], actions: '*' } })).token
      const agent = fx.as('agent')
      const selection = await agent('POST', '/v1/resources/subscriptions/selections', { filter: { status: 'past_due' } })
      assert.equal(selection.status, 201, JSON.stringify(selection.body))
      const plan = await agent('POST', `/v1/selections/${selection.body.selection_id}/plans`, { action: { type: 'pause_collection', params: { reason: 'door test' } } })
      planId = plan.body.plan_id
      planDigest = plan.body.plan_digest
      assert.equal((await fx.as('reviewer')('POST', `/v1/plans/${planId}/approvals`, { decision: 'approve', expected_plan_digest: planDigest })).status, 201)
      const commit = await agent('POST', `/v1/plans/${planId}/commit`, { expected_digest: planDigest }, { 'idempotency-key': key })
      assert.equal(commit.status, 202, JSON.stringify(commit.body))
      operationId = commit.body.operation_id
      await fx.gateway.operations.waitFor(operationId, 60_000)
    })
    after(() => fx?.close())
    const as = (token: string) => (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => call(fx.base, method, path, body, { authorization: `Bearer ${token}`, ...headers })

    test('compensation needs the action scope; asked twice, it is the same plan', async () => {
      const refused = await as(narrow)('POST', `/v1/operations/${operationId}/compensation`)
      assert.equal(refused.status, 403, JSON.stringify(refused.body))
      const first = await fx.as('agent')('POST', `/v1/operations/${operationId}/compensation`)
      assert.equal(first.status, 201, JSON.stringify(first.body))
      const again = await fx.as('agent')('POST', `/v1/operations/${operationId}/compensation`)
      assert.equal(again.status, 200)
      assert.equal(again.body.plan_id, first.body.plan_id)
    })

    test("an idempotency key belongs to its principal; a replay is scope-checked like the commit", async () => {
      const other = await as(otherAgent)('POST', `/v1/plans/${planId}/commit`, { expected_digest: planDigest }, { 'idempotency-key': key })
      assert.notEqual(other.body.operation_id, operationId, 'another principal never gets this operation back')
      assert.equal(other.status, 409, JSON.stringify(other.body)) // the plan is committed once
      const replay = await fx.as('agent')('POST', `/v1/plans/${planId}/commit`, { expected_digest: planDigest }, { 'idempotency-key': key })
      assert.equal(replay.status, 200)
      assert.equal(replay.body.operation_id, operationId)
    })

    test('not_found never lists the resources', async () => {
      const answer = await as(narrow)('POST', '/v1/resources/payroll/search', { filter: {} })
      assert.equal(answer.status, 404)
      assert.doesNotMatch(JSON.stringify(answer.body), /subscriptions/)
    })

    test('reserved filter keys are invalid_request, on HTTP and the CLI (no prototype pollution)', async () => {
      for (const raw of ['{"filter":{"__proto__":{"eq":"x"}}}', '{"filter":{"constructor":"x"}}', '{"filter":{"toString":"x"}}']) {
        for (const path of ['/v1/resources/subscriptions/search', '/v1/resources/subscriptions/selections']) {
          const answer = await fx.as('agent')('POST', path, raw, { 'content-type': 'application/json' })
          assert.equal(answer.status, 400, `${path} ${raw}: ${JSON.stringify(answer.body)}`)
          assert.equal(answer.body.error.code, 'invalid_request')
        }
      }
      assert.throws(() => parseFilterTerms(['__proto__=x'], fx.config.resources.subscriptions!), /reserved/)
      assert.equal(({} as Record<string, unknown>).eq, undefined)
    })

    test('lone surrogates, NUL, oversize and over-deep bodies: 400/413, nothing changes', async () => {
      const count = async () => Number((await fx.gateway.store.db.selectFrom('selections').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n)
      const before = await count()
      const cases: [string, string, number][] = [
        ['/v1/resources/subscriptions/selections', '{"filter":{"status":"\\ud800"}}', 400],
        ['/v1/resources/subscriptions/search', '{"filter":{"status":"a\\u0000b"}}', 400],
        ['/v1/resources/subscriptions/selections', `{"filter":{"status":"past_due"},"x":${'['.repeat(100)}${']'.repeat(100)}}`, 400],
        ['/v1/resources/subscriptions/selections', `{"filter":{"status":"${'x'.repeat(5 * 1024 * 1024)}"}}`, 413],
      ]
      for (const [path, raw, status] of cases) {
        const answer = await fx.as('agent')('POST', path, raw, { 'content-type': 'application/json' })
        assert.equal(answer.status, status, `${raw.slice(0, 80)}: ${JSON.stringify(answer.body).slice(0, 300)}`)
        assert.equal(answer.body.error.code, status === 413 ? 'payload_too_large' : 'invalid_request')
      }
      const nul = await fx.as('agent')('GET', '/v1/resources/subscriptions/records/sub%00x')
      assert.equal(nul.status, 400)
      assert.equal(await count(), before)
    })

    test('/mcp refuses a foreign Origin and accepts its own', async () => {
      const body = { jsonrpc: '2.0', id: 1, method: 'tools/list' }
      const headers = { authorization: `Bearer ${fx.tokens.agent}`, accept: 'application/json, text/event-stream' }
      const foreign = await call(fx.base, 'POST', '/mcp', body, { ...headers, origin: 'http://evil.example:8787' })
      assert.equal(foreign.status, 403)
      const own = await call(fx.base, 'POST', '/mcp', body, { ...headers, origin: fx.base })
      assert.equal(own.status, 200)
    })
  })
}
