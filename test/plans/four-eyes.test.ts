import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { assertRefused, callTool } from '../mcp/support.js'
import { caller } from '../operations/support/flow.js'
import { demoGatewayFor } from '../support/gateway-fixture.js'
import { STORE_KINDS } from '../support/stores.js'

/**
 * Four eyes: the principal who proposed a plan never decides on it, on any surface, whatever its role; another person
 * approves. Committing is not a third pair of eyes: any principal whose scope covers the action may commit a plan
 * another approved (the proposer, or the approver: the approval binds the exact plan digest, so whoever commits runs
 * exactly what a second person read). The refusal of one's own proposal says why in a stable `details.reason`
 * (`own_proposal`): it was a 403 `forbidden` like a missing role or scope, told apart only by its words.
 */
const PAUSE = { type: 'pause_collection', params: { reason: 'four eyes' } }
const FILTERS = [{ status: 'past_due', region: 'us' }, { status: 'past_due', region: 'apac' }, { status: 'active', region: 'eu' }]

for (const kind of STORE_KINDS) {
  describe(`nobody decides on their own proposal; whoever commits runs what another approved (${kind} store)`, () => {
    const env = demoGatewayFor({ store: kind, count: 300 })
    let n = 0

    async function selectionBy(who: ReturnType<typeof caller>) {
      n += 1
      const sel = await who('POST', '/v1/resources/subscriptions/selections', { filter: FILTERS[n % FILTERS.length] })
      assert.equal(sel.status, 201, JSON.stringify(sel.body))
      return sel.body.selection_id as string
    }

    function assertOwnProposal(res: { status: number; body: any }) {
      assert.equal(res.status, 403, JSON.stringify(res.body))
      assert.equal(res.body.error.code, 'forbidden')
      assert.equal(res.body.error.details.reason, 'own_proposal', JSON.stringify(res.body.error))
      assert.match(res.body.error.message, /proposed/)
    }

    test('HTTP: a reviewer and an admin who proposed cannot approve or reject it (403 own_proposal); nothing is recorded; another reviewer approves and the proposer commits', async () => {
      for (const who of ['reviewer', 'admin'] as const) {
        const self = env.fx.as(who)
        const plan = (await self('POST', `/v1/selections/${await selectionBy(self)}/plans`, { action: PAUSE })).body
        for (const decision of ['approve', 'reject'] as const)
          assertOwnProposal(await self('POST', `/v1/plans/${plan.plan_id}/approvals`, { decision, expected_plan_digest: plan.plan_digest }))
        const view = await self('GET', `/v1/plans/${plan.plan_id}`)
        assert.deepEqual([view.body.state, view.body.approvals], ['pending', []], 'no decision was recorded')
        const early = await self('POST', `/v1/plans/${plan.plan_id}/commit`, { expected_digest: plan.plan_digest }, { 'idempotency-key': `early-${plan.plan_id}` })
        assert.equal(early.status, 403, JSON.stringify(early.body))
        assert.equal(early.body.error.code, 'not_approved')

        const other = await env.fx.as('reviewer2')('POST', `/v1/plans/${plan.plan_id}/approvals`, { decision: 'approve', expected_plan_digest: plan.plan_digest })
        assert.equal(other.status, 201, JSON.stringify(other.body))
        const commit = await self('POST', `/v1/plans/${plan.plan_id}/commit`, { expected_digest: plan.plan_digest }, { 'idempotency-key': `ok-${plan.plan_id}` })
        assert.equal(commit.status, 202, JSON.stringify(commit.body))
      }
    })

    test('MCP: no tool decides; a reviewer who proposed over MCP is refused over HTTP (own_proposal); the approver may commit over MCP', async () => {
      const reviewer = await env.fx.gateway.principals.issue({ name: `mcp-reviewer-${kind}`, role: 'reviewer' })
      const client = new Client({ name: 'four-eyes', version: '1.0.0' })
      await client.connect(new StreamableHTTPClientTransport(new URL(`${env.fx.base}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${reviewer.token}` } } }))
      try {
        const tools = (await client.listTools()).tools.map((t) => t.name)
        assert.deepEqual(
          tools.filter((t) => /approv|reject|decide/.test(t)),
          [],
          `no tool decides: ${tools.join(', ')}`,
        )
        const proposed = await callTool(client, 'propose_change', { selection_id: await selectionBy(caller(env.fx.base, reviewer.token)), action: PAUSE })
        assert.ok(!proposed.isError, JSON.stringify(proposed.structuredContent))
        const plan = proposed.structuredContent
        assertOwnProposal(await caller(env.fx.base, reviewer.token)('POST', `/v1/plans/${plan.plan_id}/approvals`, { decision: 'approve', expected_plan_digest: plan.plan_digest }))
        assertRefused(await callTool(client, 'commit_change', { plan_id: plan.plan_id, expected_digest: plan.plan_digest, idempotency_key: `mcp-early-${kind}` }), 'not_approved')
      } finally {
        await client.close()
      }

      // an agent proposes, bob approves, and bob commits over MCP: the approval is a second person's, on this digest
      const agentPlan = (await env.fx.as('agent')('POST', `/v1/selections/${await selectionBy(env.fx.as('agent'))}/plans`, { action: PAUSE })).body
      assert.equal((await env.fx.as('reviewer2')('POST', `/v1/plans/${agentPlan.plan_id}/approvals`, { decision: 'approve', expected_plan_digest: agentPlan.plan_digest })).status, 201)
      const bob = new Client({ name: 'four-eyes-bob', version: '1.0.0' })
      await bob.connect(new StreamableHTTPClientTransport(new URL(`${env.fx.base}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${env.fx.tokens.reviewer2}` } } }))
      try {
        const committed = await callTool(bob, 'commit_change', { plan_id: agentPlan.plan_id, expected_digest: agentPlan.plan_digest, idempotency_key: `mcp-bob-${kind}` })
        assert.ok(!committed.isError, JSON.stringify(committed.structuredContent))
        assert.equal(committed.structuredContent.plan_id, agentPlan.plan_id)
      } finally {
        await bob.close()
      }
    })
  })
}
