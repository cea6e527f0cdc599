import assert from 'node:assert/strict'
import { before, describe, test } from 'node:test'
import type { AuditLog } from '../../src/audit/index.js'
import type { Actor } from '../../src/contract/index.js'
import { demoGatewayFor } from '../support/gateway-fixture.js'
import { STORE_KINDS } from '../support/stores.js'

const actor = (principal: string, role: Actor['role']): Actor => ({ principal, name: `${principal}-name`, role, scopes: { resources: '*', actions: '*' }, surface: 'http' })
const AGENT = actor('prn_agent', 'agent')
const ALICE = actor('prn_alice', 'reviewer')
const BOB = actor('prn_bob', 'reviewer')

/**
 * A refused request's row keeps the ids its body or arguments named (`POST /v1/resources/subscriptions/selections` with
 * `{"operation_id": "op_1", "plan_id": "plan_other"}` is 400, its row `operation_id: op_1, plan_id: plan_other`; an
 * MCP tool call refused for an unknown argument the same). "Who asked" took every row's plan and selection as the
 * operation's: one such request by any agent made plan_other, its selection and Bob's approval of it part of op_1's
 * answer (`warrant audit query --operation op_1`: "approvals: approve by prn_bob, plan plan_other"), which Bob never
 * gave for op_1. A refusal's ids are what the caller claimed, never a link between an operation and a plan.
 */
for (const kind of STORE_KINDS) {
  describe(`who asked for an operation, beside refused requests naming another plan (${kind})`, () => {
    const env = demoGatewayFor({ store: kind, count: 20 })
    let audit: AuditLog
    before(async () => {
      audit = env.fx.gateway.audit
      await audit.record({ actor: AGENT, action: 'POST /v1/resources/:resource/selections', selection_id: 'sel_1', summary: { status: 201, outcome: 'ok' } })
      await audit.record({ actor: AGENT, action: 'POST /v1/selections/:id/plans', selection_id: 'sel_1', plan_id: 'plan_1', summary: { status: 201, outcome: 'ok' } })
      await audit.record({ actor: ALICE, action: 'POST /v1/plans/:id/approvals', plan_id: 'plan_1', summary: { status: 201, outcome: 'ok' }, details: { decision: 'approve' } })
      await audit.record({ actor: AGENT, action: 'POST /v1/plans/:id/commit', plan_id: 'plan_1', operation_id: 'op_1', summary: { status: 202, outcome: 'ok' } })
      // another plan, of another selection, approved by Bob: nothing to do with op_1
      await audit.record({ actor: AGENT, action: 'POST /v1/selections/:id/plans', selection_id: 'sel_other', plan_id: 'plan_other', summary: { status: 201, outcome: 'ok' } })
      await audit.record({ actor: BOB, action: 'POST /v1/plans/:id/approvals', plan_id: 'plan_other', summary: { status: 201, outcome: 'ok' }, details: { decision: 'approve' } })
      // refused requests naming both: one over real HTTP (its row written by the HTTP trail), one as the MCP audit writes it
      const refused = await env.fx.as('agent')('POST', '/v1/resources/subscriptions/selections', { filter: {}, operation_id: 'op_1', plan_id: 'plan_other', selection_id: 'sel_other' })
      assert.equal(refused.status, 400)
      await audit.flush()
      const row = await env.fx.gateway.store.db.selectFrom('audit_events').selectAll().orderBy('seq', 'desc').limit(1).executeTakeFirstOrThrow()
      assert.deepEqual([row.operation_id, row.plan_id, row.selection_id], ['op_1', 'plan_other', 'sel_other'])
      await audit.record({
        actor: AGENT,
        surface: 'mcp',
        action: 'mcp:get_operation',
        operation_id: 'op_1',
        plan_id: 'plan_other',
        summary: { arguments: { operation_id: 'op_1', plan_id: 'plan_other' }, outcome: 'refused', error: 'invalid_request' },
      })
    })

    test("the operation's plan and selection only, and only its plan's approval", async () => {
      const answer = await audit.whoAsked('op_1')
      assert.deepEqual(answer.plan_ids, ['plan_1'])
      assert.deepEqual(answer.selection_ids, ['sel_1'])
      assert.deepEqual(
        answer.approvals.map((a) => [a.principal, a.decision, a.plan_id]),
        [[ALICE.principal, 'approve', 'plan_1']],
      )
      // the refused requests themselves are still the agent's events of op_1
      assert.ok(answer.events.some((e) => e.action === 'mcp:get_operation'))
      assert.ok(!answer.events.some((e) => e.principal === BOB.principal))
    })
  })
}
