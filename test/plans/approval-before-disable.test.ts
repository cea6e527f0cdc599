import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { renderPlan } from '../../src/cli/render-selection.js'
import { callTool } from '../mcp/support.js'
import { caller } from '../operations/support/flow.js'
import { demoGatewayFor } from '../support/gateway-fixture.js'
import { openReviewSession } from '../support/review-session.js'
import { STORE_KINDS } from '../support/stores.js'
import { refusedCommit } from './support/withdrawn-approval.js'

/**
 * A principal is disabled because it was compromised or left. An approval it gave before the disable (maybe while
 * compromised) must stay void once an operator enables it again: it counted again after `warrant principal enable`,
 * and the commit went through (202). The same for a plan whose proposer was disabled after the approval: a person
 * approves it again. Every view of the plan says which approval no longer counts and why.
 */
const PAUSE = { type: 'pause_collection', params: { reason: 'disabled then enabled' } }
const FILTERS = [{ status: 'past_due', region: 'us' }, { status: 'past_due', region: 'apac' }, { status: 'active', region: 'eu' }, { status: 'canceled', region: 'us' }]

for (const kind of STORE_KINDS) {
  describe(`an approval given before its approver's (or the plan's proposer's) disable stays void once enabled (${kind} store)`, () => {
    const env = demoGatewayFor({ store: kind, count: 300 })
    let n = 0

    /** A fresh agent proposes, a fresh reviewer approves over HTTP; the plan is approved. */
    async function approvedPlan() {
      n += 1
      const reviewer = await env.fx.gateway.principals.issue({ name: `dora-${n}`, role: 'reviewer' })
      const agentIssued = await env.fx.gateway.principals.issue({ name: `agent-${n}`, role: 'agent', scopes: { resources: ['subscriptions'], actions: '*' } })
      const agent = caller(env.fx.base, agentIssued.token)
      const sel = await agent('POST', '/v1/resources/subscriptions/selections', { filter: FILTERS[n % FILTERS.length] })
      assert.equal(sel.status, 201, JSON.stringify(sel.body))
      const plan = await agent('POST', `/v1/selections/${sel.body.selection_id}/plans`, { action: PAUSE })
      assert.equal(plan.status, 201, JSON.stringify(plan.body))
      const approved = await caller(env.fx.base, reviewer.token)('POST', `/v1/plans/${plan.body.plan_id}/approvals`, { decision: 'approve', expected_plan_digest: plan.body.plan_digest })
      assert.equal(approved.status, 201, JSON.stringify(approved.body))
      assert.equal(approved.body.plan_state, 'approved')
      return { plan: plan.body as { plan_id: string; plan_digest: string }, reviewer, agent, agentIssued }
    }

    test('the approver is disabled, then enabled: its earlier approval stays void on every surface; a new approval counts', async () => {
      const { plan, reviewer, agent, agentIssued } = await approvedPlan()
      await env.fx.gateway.principals.disable(reviewer.name)
      const enabled = await env.fx.gateway.principals.enable(reviewer.name)
      assert.equal(enabled.changed, true)
      const { error, view } = await refusedCommit(env.fx, agent, plan, 'approver_disabled_since')
      assert.match(error.message, /dora-\d+/)
      assert.match(error.message, /disabled after/)

      // the CLI renders the same view
      assert.match(renderPlan(view), /NO LONGER COUNTS: the approval by "dora-\d+" at .*disabled after/)

      // the review page
      const bob = await openReviewSession(env.fx.base, env.fx.tokens.reviewer2)
      const page = await bob.get(`/review/plans/${plan.plan_id}`)
      assert.equal(page.status, 200)
      assert.match(page.html, /data-testid="not-counted"[^>]*>[\s\S]*?dora-\d+[\s\S]*?disabled after/)

      // MCP get_plan, over /mcp: the text an agent reads names it too
      const client = new Client({ name: 'disable-test', version: '1.0.0' })
      await client.connect(new StreamableHTTPClientTransport(new URL(`${env.fx.base}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${agentIssued.token}` } } }))
      try {
        const got = await callTool(client, 'get_plan', { plan_id: plan.plan_id })
        assert.equal(got.structuredContent.approvals[0].not_counted, 'approver_disabled_since')
        const text = got.content.map((c: any) => c.text).join('\n')
        assert.match(text, /No longer counts: the approval by "dora-\d+" at .*disabled after/)
      } finally {
        await client.close()
      }

      // the same person approves again, after the enable: that approval counts and the commit goes through
      const again = await caller(env.fx.base, reviewer.token)('POST', `/v1/plans/${plan.plan_id}/approvals`, { decision: 'approve', expected_plan_digest: plan.plan_digest })
      assert.equal(again.status, 201, JSON.stringify(again.body))
      assert.equal(again.body.counted, true)
      assert.equal(again.body.plan_state, 'approved')
      const commit = await agent('POST', `/v1/plans/${plan.plan_id}/commit`, { expected_digest: plan.plan_digest }, { 'idempotency-key': `k2-${plan.plan_id}` })
      assert.equal(commit.status, 202, JSON.stringify(commit.body))
    })

    test('a second disable and enable voids the approval given between the two', async () => {
      const { plan, reviewer, agent } = await approvedPlan()
      await env.fx.gateway.principals.disable(reviewer.name)
      await env.fx.gateway.principals.enable(reviewer.name)
      const again = await caller(env.fx.base, reviewer.token)('POST', `/v1/plans/${plan.plan_id}/approvals`, { decision: 'approve', expected_plan_digest: plan.plan_digest })
      assert.equal(again.body.counted, true)
      await env.fx.gateway.principals.disable(reviewer.name)
      await env.fx.gateway.principals.enable(reviewer.name)
      const view = await agent('GET', `/v1/plans/${plan.plan_id}`)
      assert.equal(view.body.state, 'pending')
      assert.deepEqual(
        view.body.approvals.map((a: any) => a.not_counted),
        ['approver_disabled_since', 'approver_disabled_since'],
      )
    })

    test("the plan's proposer is disabled, then enabled: the approval given before stays void; a person approves again", async () => {
      const { plan, reviewer, agent, agentIssued } = await approvedPlan()
      await env.fx.gateway.principals.disable(agentIssued.name)
      await env.fx.gateway.principals.enable(agentIssued.name)
      const { error } = await refusedCommit(env.fx, agent, plan, 'proposer_disabled_since')
      assert.match(error.message, /proposer was disabled after/)
      const again = await caller(env.fx.base, reviewer.token)('POST', `/v1/plans/${plan.plan_id}/approvals`, { decision: 'approve', expected_plan_digest: plan.plan_digest })
      assert.equal(again.status, 201, JSON.stringify(again.body))
      assert.equal(again.body.plan_state, 'approved')
      const commit = await agent('POST', `/v1/plans/${plan.plan_id}/commit`, { expected_digest: plan.plan_digest }, { 'idempotency-key': `k2-${plan.plan_id}` })
      assert.equal(commit.status, 202, JSON.stringify(commit.body))
    })

    test('an enable never clears what a disable voided: the watermark stays in the listing', async () => {
      const { reviewer } = await approvedPlan()
      const disabled = await env.fx.gateway.principals.disable(reviewer.name)
      await env.fx.gateway.principals.enable(reviewer.name)
      const listed = (await env.fx.gateway.principals.listPrincipals()).find((p) => p.name === reviewer.name)!
      assert.equal(listed.disabled_at, null)
      assert.equal(listed.last_disabled_at, disabled.disabled_at)
    })
  })
}

for (const kind of STORE_KINDS) {
  describe(`a decision that reaches the store after its approver's disable is refused (${kind} store)`, () => {
    const env = demoGatewayFor({ store: kind, count: 300 })

    test('authenticated before the disable, recorded after it: refused 401 principal_disabled, no approval row, none to count once enabled', async () => {
      const reviewer = await env.fx.gateway.principals.issue({ name: 'erin', role: 'reviewer' })
      const sel = await env.fx.as('agent')('POST', '/v1/resources/subscriptions/selections', { filter: { status: 'past_due', region: 'us' } })
      const plan = (await env.fx.as('agent')('POST', `/v1/selections/${sel.body.selection_id}/plans`, { action: PAUSE })).body
      // the request was authenticated (its actor made) before the disable committed: the decision is recorded after it
      const actor = await env.fx.gateway.principals.authenticate(reviewer.token, 'http')
      await env.fx.gateway.principals.disable('erin')
      await assert.rejects(env.fx.gateway.plans.decide(actor, plan.plan_id, { decision: 'approve', expected_plan_digest: plan.plan_digest }), (e: any) => {
        assert.equal(e.code, 'unauthenticated')
        assert.equal(e.details?.reason, 'principal_disabled')
        return true
      })
      await env.fx.gateway.principals.enable('erin')
      const rows = await env.fx.gateway.store.db.selectFrom('approvals').select('id').where('plan_id', '=', plan.plan_id).execute()
      assert.deepEqual(rows, [], 'no approval was recorded')
      assert.equal((await env.fx.as('agent')('GET', `/v1/plans/${plan.plan_id}`)).body.state, 'pending')
    })
  })
}
