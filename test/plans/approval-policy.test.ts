import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { type GatewayFixture, startDemoGateway } from '../support/gateway-fixture.js'
import { STORE_KINDS } from '../support/stores.js'

/**
 * A standing approval judges a plan by its selection's count. An incomplete selection's count is only what the
 * cut-short walk returned, so no standing approval applies to it and the plan never reads as approved; a
 * reviewer can still reject it (approving is refused, as committing is).
 */
const PAUSE = { type: 'pause_collection', params: { reason: 'standing approval on an incomplete selection' } }

for (const kind of STORE_KINDS) {
  describe(`standing approvals and incomplete selections (${kind} store)`, () => {
    let fx: GatewayFixture
    before(async () => {
      fx = await startDemoGateway({
        store: kind,
        count: 300,
        edit: (raw) => {
          raw.resources.subscriptions.standing_approvals.push({ name: 'small-eu', selector: { region: 'eu' }, action: 'pause_collection', max_count: 25 })
          raw.resources.subscriptions.standing_approvals.push({ name: 'any-us', selector: { region: 'us' }, action: 'pause_collection', max_count: 1000 })
        },
      })
    })
    after(async () => {
      await fx?.close()
    })

    test('a plan on an incomplete selection is never approved by a standing approval, and the reason says why', async () => {
      const agent = fx.as('agent')
      // every eu record: far more than max_count 25, but the walk stops after one page of 10
      const full = await agent('POST', '/v1/resources/subscriptions/selections', { filter: { region: 'eu' } })
      assert.equal(full.body.complete, true)
      assert.ok(full.body.count > 25, `${full.body.count} eu records`)
      const sel = await agent('POST', '/v1/resources/subscriptions/selections', { filter: { region: 'eu' }, page_size: 10, budget: { max_pages: 1 } })
      assert.equal(sel.status, 201)
      assert.equal(sel.body.complete, false)

      const plan = await agent('POST', `/v1/selections/${sel.body.selection_id}/plans`, { action: PAUSE })
      assert.equal(plan.status, 201, JSON.stringify(plan.body))
      assert.notEqual(plan.body.state, 'approved')
      assert.notEqual(plan.body.approval.required, 'none', `standing approval granted on ${sel.body.count} of ${full.body.count} matching records: ${plan.body.approval.reason}`)
      assert.equal(plan.body.approval.standing_approval, null)
      assert.doesNotMatch(plan.body.approval.reason, /within its max_count/)
      assert.match(plan.body.approval.reason, /standing approval "small-eu" does not apply: the selection is incomplete/)
      assert.match(plan.body.approval.reason, /only what the walk returned/)

      const commit = await agent('POST', `/v1/plans/${plan.body.plan_id}/commit`, { expected_digest: plan.body.plan_digest }, { 'idempotency-key': 'inc-1' })
      assert.equal(commit.status, 409)
      assert.equal(commit.body.error.code, 'selection_incomplete')
      const view = await agent('GET', `/v1/plans/${plan.body.plan_id}`)
      assert.equal(view.status, 200)
      assert.equal(view.body.state, 'pending', `state: ${view.body.state}; reason: ${view.body.approval.reason}`)
      assert.equal(view.body.approval_state.approved, false)
    })

    test('a standing approval still covers the complete selection, never the same selector cut short', async () => {
      const agent = fx.as('agent')
      const full = await agent('POST', '/v1/resources/subscriptions/selections', { filter: { region: 'us' } })
      assert.equal(full.body.complete, true)
      assert.ok(full.body.count > 10 && full.body.count <= 1000, `${full.body.count} us records`)
      const covered = await agent('POST', `/v1/selections/${full.body.selection_id}/plans`, { action: PAUSE })
      assert.equal(covered.body.approval.standing_approval, 'any-us')
      assert.equal(covered.body.state, 'approved')

      const cut = await agent('POST', '/v1/resources/subscriptions/selections', { filter: { region: 'us' }, page_size: 10, budget: { max_pages: 1 } })
      assert.equal(cut.body.complete, false)
      const plan = await agent('POST', `/v1/selections/${cut.body.selection_id}/plans`, { action: PAUSE })
      assert.equal(plan.body.approval.standing_approval, null)
      assert.equal(plan.body.state, 'pending')
      assert.match(plan.body.approval.reason, /standing approval "any-us" does not apply: the selection is incomplete/)
    })

    test('a reviewer cannot approve a plan on an incomplete selection (409 naming it), but can reject it', async () => {
      const agent = fx.as('agent')
      const sel = await agent('POST', '/v1/resources/subscriptions/selections', { filter: { region: 'eu', status: 'active' }, page_size: 10, budget: { max_pages: 1 } })
      assert.equal(sel.body.complete, false)
      const plan = await agent('POST', `/v1/selections/${sel.body.selection_id}/plans`, { action: PAUSE })
      assert.equal(plan.status, 201)

      const approve = await fx.as('reviewer')('POST', `/v1/plans/${plan.body.plan_id}/approvals`, { decision: 'approve', expected_plan_digest: plan.body.plan_digest })
      assert.equal(approve.status, 409)
      assert.equal(approve.body.error.code, 'selection_incomplete')
      assert.match(approve.body.error.message, /incomplete inventory/)
      assert.equal((await agent('GET', `/v1/plans/${plan.body.plan_id}`)).body.approvals.length, 0, 'a refused approval records nothing')

      const reject = await fx.as('reviewer')('POST', `/v1/plans/${plan.body.plan_id}/approvals`, { decision: 'reject', expected_plan_digest: plan.body.plan_digest, comment: 'recover it first' })
      assert.equal(reject.status, 201, JSON.stringify(reject.body))
      assert.equal(reject.body.plan_state, 'rejected')
      const view = await agent('GET', `/v1/plans/${plan.body.plan_id}`)
      assert.equal(view.body.state, 'rejected')
      assert.equal(view.body.approval_state.rejected_by.comment, 'recover it first')
    })
  })
}
