import assert from 'node:assert/strict'
import type BetterSqlite3 from 'better-sqlite3'
import type { GatewayFixture } from '../../support/gateway-fixture.js'
import { selectProposeApprove, waitForOperation } from '../../operations/support/flow.js'

/**
 * Pauses collection of every past-due, active `us` subscription (an operation that succeeds on each), then someone
 * resumes two of them in the upstream, and a compensation is proposed: two of its targets no longer hold what the
 * operation wrote. Answers the frozen selection, the two moved ids and the proposal (201, failing_now 2).
 */
export async function compensationWithTwoMoved(fx: GatewayFixture, upstream: BetterSqlite3.Database, key: string) {
  const agent = fx.as('agent')
  const action = { type: 'pause_collection', params: { reason: 'dunning review' } }
  const request = { filter: { region: 'us', status: 'past_due', collection: 'active' } }
  const { selection } = await selectProposeApprove(agent, [fx.as('reviewer'), fx.as('reviewer2')], 'subscriptions', request, action)
  const commit = await agent('POST', '/v1/resources/subscriptions/bulk-actions', { selection_id: selection.selection_id, expected_digest: selection.digest, action }, { 'idempotency-key': key })
  assert.equal(commit.status, 202, JSON.stringify(commit.body))
  const first = await waitForOperation(agent, commit.body.operation_id)
  assert.equal(first.counts.succeeded, selection.count)
  assert.ok(selection.count >= 3)
  // someone resumes two of them since
  const moved = (upstream.prepare(`select id from subscriptions where region = 'us' and status = 'past_due' and collection = 'paused' order by id limit 2`).all() as { id: string }[]).map((r) => r.id)
  for (const id of moved) upstream.prepare(`update subscriptions set collection = 'active', version = version + 1 where id = ?`).run(id)
  const proposed = await agent('POST', `/v1/operations/${first.operation_id}/compensation`)
  assert.equal(proposed.status, 201, JSON.stringify(proposed.body))
  assert.equal(proposed.body.precondition.failing_now, 2)
  return { selection, moved, proposed }
}
