import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import BetterSqlite3 from 'better-sqlite3'
import { startDemoGateway, type GatewayFixture } from '../support/gateway-fixture.js'
import { reviewPage } from '../support/review-page.js'
import { allResults, caller, selectProposeApprove, waitForOperation, type Caller } from './support/flow.js'
import { docIdOf, startDocsGateway, startDocsUpstream, type DocsUpstream } from './support/docs-upstream.js'

/** Proposes the compensation of an operation, approves it, commits it, and waits for it. */
async function compensate(agent: Caller, reviewer: Caller, operationId: string, key: string): Promise<{ plan: any; operation: any }> {
  const proposed = await agent('POST', `/v1/operations/${operationId}/compensation`)
  assert.equal(proposed.status, 201, JSON.stringify(proposed.body))
  const plan = proposed.body
  const approval = await reviewer('POST', `/v1/plans/${plan.plan_id}/approvals`, { decision: 'approve', expected_plan_digest: plan.plan_digest, comment: 'undo' })
  assert.equal(approval.status, 201, JSON.stringify(approval.body))
  const commit = await agent('POST', `/v1/plans/${plan.plan_id}/commit`, { expected_digest: plan.plan_digest }, { 'idempotency-key': key })
  assert.equal(commit.status, 202, JSON.stringify(commit.body))
  return { plan, operation: await waitForOperation(agent, commit.body.operation_id) }
}

describe('a compensation after the records changed again (issue 11, item 6)', () => {
  test('http upstream without snapshot: targets that no longer hold what was written are skipped, not a halt; the preview says how many', async () => {
    const upstream: DocsUpstream = await startDocsUpstream(12)
    let fx: GatewayFixture | undefined
    try {
      fx = await startDocsGateway(upstream)
      const token = (await fx.gateway.principals.issue({ name: 'docs-agent', role: 'agent', scopes: { resources: ['docs'], actions: '*' } })).token
      const agent = caller(fx.base, token)
      const reviewer = fx.as('reviewer')
      const action = { type: 'set_status', status: 'paused' }
      const { selection } = await selectProposeApprove(agent, [reviewer], 'docs', { filter: { status: 'active' } }, action)
      const commit = await agent('POST', '/v1/resources/docs/bulk-actions', { selection_id: selection.selection_id, expected_digest: selection.digest, action }, { 'idempotency-key': 'pause-docs' })
      const first = await waitForOperation(agent, commit.body.operation_id)
      assert.equal(first.counts.succeeded, 12)

      // Someone resumes ten of the twelve documents again; two still hold what the operation wrote.
      for (let i = 1; i <= 10; i++) upstream.touch(docIdOf(i), { status: 'active' })
      const writesBefore = upstream.writes.length
      const { plan, operation } = await compensate(agent, reviewer, first.operation_id, 'undo-docs')

      assert.equal(plan.precondition.per_target, true)
      assert.equal(plan.precondition.failing_now, 10, 'the preview counts the records that no longer hold what was written')
      const status = plan.changes.summary.find((s: any) => s.field === 'status')
      // the preview shows the data as it is, not as the operation left it: the two it restores in before, the ten it
      // would skip apart (counted in before, "active" (10) → "active" read as ten records restored)
      assert.deepEqual(status.before, [{ value: 'paused', count: 2 }], JSON.stringify(status))
      assert.deepEqual([status.skipped_before, status.skipped, status.unchanged], [[{ value: 'active', count: 10 }], 10, 0], JSON.stringify(status))
      assert.match(await reviewPage(fx, `/review/plans/${plan.plan_id}`), /10 records no longer held it: they would be skipped/)

      assert.notEqual(operation.state, 'halted', JSON.stringify(operation.halt_reason))
      assert.deepEqual([operation.counts.skipped, operation.counts.succeeded, operation.counts.pending], [10, 2, 0])
      const skipped = await allResults(agent, operation.operation_id, 'skipped')
      assert.ok(skipped.every((r) => r.reason === 'precondition_failed' && /no longer holds what was written: "status" is "active", not "paused"/.test(r.error)), JSON.stringify(skipped[0]))
      assert.equal(upstream.writes.length - writesBefore, 2, 'only the two records that still held it were written')
      for (let i = 1; i <= 12; i++) assert.equal(upstream.doc(docIdOf(i)).status, 'active')
    } finally {
      await fx?.close()
      await upstream.close()
    }
  })

  test('a list the operation wrote, changed since without a new version: the per-target guard skips it (a filter could not compare it)', async () => {
    const fx = await startDemoGateway({
      store: 'sqlite',
      count: 30,
      edit: (raw) => {
        raw.resources.subscriptions.actions.hold = { description: 'Tag on hold', set: { tags: ['on-hold'] }, precondition: { status: 'past_due' } }
      },
    })
    const db = new BetterSqlite3(fx.upstreamUrl.slice('sqlite:'.length))
    try {
      const agent = fx.as('agent')
      const reviewer = fx.as('reviewer')
      const { selection } = await selectProposeApprove(agent, [reviewer], 'subscriptions', { filter: { status: 'past_due' } }, { type: 'hold' })
      const commit = await agent('POST', '/v1/resources/subscriptions/bulk-actions', { selection_id: selection.selection_id, expected_digest: selection.digest, action: { type: 'hold' } }, { 'idempotency-key': 'hold' })
      const first = await waitForOperation(agent, commit.body.operation_id)
      assert.equal(first.counts.succeeded, selection.count)
      const ids = (await allResults(agent, first.operation_id, 'succeeded')).map((r) => r.id)
      assert.ok(ids.length >= 2)

      // A script adds a tag to the first record, bypassing the version column (it stays what our write left).
      const [moved, ...kept] = ids
      const version = (db.prepare('select version from subscriptions where id = ?').get(moved) as { version: number }).version
      db.prepare(`update subscriptions set tags = '["on-hold","vip"]' where id = ?`).run(moved)
      assert.equal((db.prepare('select version from subscriptions where id = ?').get(moved) as { version: number }).version, version)

      const { operation } = await compensate(agent, reviewer, first.operation_id, 'undo-hold')
      assert.notEqual(operation.state, 'halted')
      assert.deepEqual([operation.counts.skipped, operation.counts.succeeded], [1, kept.length])
      const [skipped] = await allResults(agent, operation.operation_id, 'skipped')
      assert.equal(skipped.id, moved)
      assert.match(skipped.error, /no longer holds what was written: "tags" is \["on-hold","vip"\], not \["on-hold"\]; nothing was written/)
      assert.equal((db.prepare('select tags from subscriptions where id = ?').get(moved) as { tags: string }).tags, '["on-hold","vip"]', 'the tag added since survives')
    } finally {
      db.close()
      await fx.close()
    }
  })
})
