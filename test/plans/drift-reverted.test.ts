import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { describe, test } from 'node:test'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { renderPlan } from '../../src/cli/render-selection.js'
import { callTool } from '../mcp/support.js'
import { call, serveGateway } from '../support/gateway-fixture.js'
import { pagePart, reviewPageHtml } from '../support/review-page.js'
import { STORE_KINDS } from '../support/stores.js'
import { startThingsToMove } from './support/odd-upstream.js'

/**
 * A plan is proposed and approved under config A; an instance on config B (its action redefined: no precondition)
 * shows it as "CANNOT RUN … never approved or committed", refuses its commit and tells the agent to propose again; the
 * config is then put back to A. The plan was judged by the config alone, so it was committable again on the approval
 * given before the drift: the reviewer who was told it could never run, and may have approved a replacement since, had
 * it run on a decision they took for dead. Once the drift has been seen (a view, a decision, a commit refused), the
 * approvals given before it no longer count, on every surface; the plan can be approved afresh once the config is back.
 */
for (const kind of STORE_KINDS) {
  describe(`a plan whose config drifted and was put back (${kind} store)`, () => {
    test('approvals given before the drift stay void after the revert; a fresh approval commits it', async () => {
      const things = await startThingsToMove(kind, { move: (t) => void (t.actions.set_status.precondition = {}) })
      const { fx, staging } = things
      const servers: { stop(): Promise<void> }[] = []
      try {
        const token = (await fx.gateway.principals.issue({ name: 'drift-agent', role: 'agent', scopes: { resources: ['things'], actions: '*' } })).token
        const agentAuth = { authorization: `Bearer ${token}` }
        const a = await serveGateway(fx.gateway)
        servers.push(a)
        const created = await call(a.base, 'POST', '/v1/resources/things/selections', { filter: { status: 'open' } }, agentAuth)
        assert.equal(created.status, 201, JSON.stringify(created.body))
        const proposed = await call(a.base, 'POST', `/v1/selections/${created.body.selection_id}/plans`, { action: { type: 'set_status', params: { status: 'closed' } } }, agentAuth)
        assert.equal(proposed.status, 201, JSON.stringify(proposed.body))
        const plan = proposed.body
        const approve = (base: string, reviewer: string) =>
          call(base, 'POST', `/v1/plans/${plan.plan_id}/approvals`, { decision: 'approve', expected_plan_digest: plan.plan_digest }, { authorization: `Bearer ${reviewer}` })
        const given = await approve(a.base, fx.tokens.reviewer)
        assert.equal(given.status, 201, JSON.stringify(given.body))
        assert.equal(given.body.plan_state, 'approved')

        // config B: the plan is drifted, its commit refused, its approval refused
        const moved = await things.move()
        const b = await serveGateway(moved)
        servers.push(b)
        const driftView = await call(b.base, 'GET', `/v1/plans/${plan.plan_id}`, undefined, agentAuth)
        assert.deepEqual(driftView.body.config_drift.map((d: any) => d.code), ['action_redefined'])
        // what it shows then is what holds after: the approval given before no longer counts
        assert.equal(driftView.body.approvals[0].not_counted, 'config_drifted_since')
        assert.match(driftView.body.approval_state.who_can_approve, /does not count again if the config is put back/)
        const refused = await call(b.base, 'POST', `/v1/plans/${plan.plan_id}/commit`, { expected_digest: plan.plan_digest }, { ...agentAuth, 'idempotency-key': randomUUID() })
        assert.equal(refused.status, 409, JSON.stringify(refused.body))
        await things.handBack()

        // config A again: the plan is the one reviewed, but the approval given before the drift does not count
        const back = await call(a.base, 'GET', `/v1/plans/${plan.plan_id}`, undefined, agentAuth)
        assert.equal(back.status, 200)
        assert.deepEqual(back.body.config_drift, [])
        assert.equal(back.body.state, 'pending', JSON.stringify(back.body.approvals))
        assert.equal(back.body.approvals[0].not_counted, 'config_drifted_since')
        assert.match(renderPlan(back.body), /no longer counts: the config moved under this plan after it was given/)
        const stale = await call(a.base, 'POST', `/v1/plans/${plan.plan_id}/commit`, { expected_digest: plan.plan_digest }, { ...agentAuth, 'idempotency-key': randomUUID() })
        assert.equal(stale.status, 403, JSON.stringify(stale.body))
        assert.equal(stale.body.error.code, 'not_approved')
        assert.match(stale.body.error.message, /config moved under this plan after it was given/)
        assert.equal([...staging.writes.values()].length, 0, 'nothing was written')
        const page = pagePart(await reviewPageHtml({ base: a.base, tokens: fx.tokens }, `/review/plans/${plan.plan_id}`), 'not-counted')
        assert.match(page, /config_drifted_since/)
        const client = new Client({ name: 'drift-reverted-test', version: '1.0.0' })
        await client.connect(new StreamableHTTPClientTransport(new URL(`${a.base}/mcp`), { requestInit: { headers: agentAuth } }))
        try {
          const got = await callTool(client, 'get_plan', { plan_id: plan.plan_id })
          assert.equal(got.structuredContent.approvals[0].not_counted, 'config_drifted_since')
          assert.match(got.content.map((c: any) => c.text).join('\n'), /No longer counts: .*config moved under this plan/)
        } finally {
          await client.close()
        }

        // a reviewer approves it again, knowing: it commits and runs under config A (precondition and all)
        const again = await approve(a.base, fx.tokens.reviewer2)
        assert.equal(again.status, 201, JSON.stringify(again.body))
        assert.equal(again.body.plan_state, 'approved')
        const committed = await call(a.base, 'POST', `/v1/plans/${plan.plan_id}/commit`, { expected_digest: plan.plan_digest }, { ...agentAuth, 'idempotency-key': randomUUID() })
        assert.equal(committed.status, 202, JSON.stringify(committed.body))
        const done = await fx.gateway.operations.waitFor(committed.body.operation_id, 30_000)
        assert.equal(done.counts.succeeded, staging.things.size, JSON.stringify(done.counts))

        // the audit trail reads in order: refused under the drift, refused on the old approval, committed on the new one
        await fx.gateway.audit.flush()
        const commits = await fx.gateway.store.db.selectFrom('audit_events').select(['summary']).where('level', '=', 'run').where('plan_id', '=', plan.plan_id).orderBy('seq').execute()
        const outcomes = commits.map((r) => JSON.parse(r.summary) as Record<string, any>).filter((s) => /\/commit$/.test(String(s.path ?? '')))
        assert.deepEqual(outcomes.map((s) => s.error ?? s.status), ['conflict', 'not_approved', 202], JSON.stringify(outcomes))
      } finally {
        for (const s of servers) await s.stop()
        await things.close()
      }
    })
  })
}
