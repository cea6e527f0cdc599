import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import type { Actor } from '../../src/contract/index.js'
import { createCliWorkspace } from '../support/cli-config.js'
import { demoGatewayFor } from '../support/gateway-fixture.js'
import { STORE_KINDS } from '../support/stores.js'

const AGENT: Actor = { principal: 'prn_agent', name: 'agent', role: 'agent', scopes: { resources: '*', actions: '*' }, surface: 'http' }

/**
 * `GET /v1/audit`, `warrant audit query` and its "who asked" listed rows as stored, with nothing saying they were not
 * checked: a row altered in the store (a decision turned from reject to approve) was listed as it now reads, beside
 * an answer that looked like the audit trail's word. Verifying every answer would walk the whole chain per request
 * (a listing cannot see rows removed between the ones it matches), so each answer says it is unverified instead and
 * points at `warrant audit verify` / `GET /v1/audit/verify`, which names the altered row.
 */
for (const kind of STORE_KINDS) {
  describe(`an audit listing says it was not verified (${kind})`, () => {
    const env = demoGatewayFor({ store: kind, count: 20 })
    before(async () => {
      const audit = env.fx.gateway.audit
      await audit.record({ actor: AGENT, action: 'POST /v1/plans/:id/approvals', plan_id: 'plan_1', summary: { status: 201, outcome: 'ok' }, details: { decision: 'reject' } })
      await audit.flush()
      // altered behind the log's back: the listing shows the new text
      await env.fx.gateway.store.db.updateTable('audit_events').set({ details: '{"decision":"approve"}' }).where('plan_id', '=', 'plan_1').execute()
    })

    test('GET /v1/audit answers verified: false with a pointer to the verify endpoint; verify names the row', async () => {
      const listed = await env.fx.as('reviewer')('GET', '/v1/audit?plan_id=plan_1')
      assert.equal(listed.status, 200, JSON.stringify(listed.body))
      assert.equal(listed.body.verified, false)
      assert.match(listed.body.verification, /not checked against the hash chain.*GET \/v1\/audit\/verify/)
      const verify = await env.fx.as('reviewer')('GET', '/v1/audit/verify')
      assert.equal(verify.body.problem, 'altered')
    })
  })
}

describe('`warrant audit query` says its answer was not verified (real processes, sqlite)', () => {
  let ws: Awaited<ReturnType<typeof createCliWorkspace>>
  before(async () => {
    ws = await createCliWorkspace({ count: 3 })
  })
  after(() => ws?.drop())

  test('text and --json, with and without who asked', { timeout: 120_000 }, async () => {
    assert.equal((await ws.warrant(['token', 'create', '--role', 'agent', '--name', 'a'])).code, 0)
    const principal = await ws.withStore(async (store) => (await store.db.selectFrom('audit_events').select('principal').where('principal', 'is not', null).limit(1).executeTakeFirst())?.principal ?? 'prn_none')
    const text = await ws.warrant(['audit', 'query', '--principal', principal])
    assert.equal(text.code, 0, text.stderr)
    assert.match(text.stdout, /^not verified: .*warrant audit verify/m)
    const json = await ws.warrant(['audit', 'query', '--principal', principal, '--json'])
    assert.equal(json.code, 0, json.stderr)
    const parsed = JSON.parse(json.stdout) as { verified: unknown; verification: unknown }
    assert.equal(parsed.verified, false)
    assert.match(String(parsed.verification), /warrant audit verify/)
  })
})
