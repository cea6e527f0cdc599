import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import type { Actor, Filter } from '../../src/contract/index.js'
import type { ActionRequest, PlanService } from '../../src/plans/index.js'
import type { Catalogue, Resource } from '../../src/resources/index.js'
import type { GatewayFixture } from '../support/gateway-fixture.js'
import { STORE_KINDS } from '../support/stores.js'
import { changedCatalogue, plansOver as plansOverCatalogue, startWithStandingApproval } from './support/changed-config.js'

/**
 * The re-checks a commit makes of what changed between review and commit (SAFETY.md). Each test first shows
 * the plan is committable as configured, then changes one thing the reviewer relied on, through the same
 * store, and expects the refusal: with the guard removed the second call succeeds and the test fails.
 */

const PAUSE = { type: 'pause_collection', params: { reason: 'commit guard test' } }
const GLOBEX = { filter: { region: 'eu', tenant: 'globex', status: 'past_due' } }


for (const kind of STORE_KINDS) {
  describe(`a commit re-checks what the reviewer relied on (${kind} store)`, () => {
    let fx: GatewayFixture
    let agent: Actor
    let reviewer: Actor

    /** The plan service of a gateway restarted on the same store with `catalogue`. */
    const plansOver = (catalogue: Catalogue): PlanService => plansOverCatalogue(fx, catalogue)

    async function approvedPlan(filter: Filter, action: ActionRequest = PAUSE) {
      const selection = await fx.gateway.selections.create(agent, 'subscriptions', { filter })
      const plan = await fx.gateway.plans.propose(agent, selection.selection_id, { action })
      if (plan.approval.reviewers_needed > 0) await fx.gateway.plans.decide(reviewer, plan.plan_id, { decision: 'approve', expected_plan_digest: plan.plan_digest })
      await fx.gateway.plans.assertCommittable(agent, plan.plan_id, plan.plan_digest)
      return { selection, plan }
    }

    before(async () => {
      fx = await startWithStandingApproval(kind, {
        name: 'globex-past-due-eu',
        selector: { status: 'past_due', region: 'eu', tenant: 'globex' },
        action: 'pause_collection',
        max_count: 25,
        flagged: { tags: { contains: 'enterprise' } },
      })
      agent = await fx.gateway.principals.authenticate(fx.tokens.agent, 'http')
      reviewer = await fx.gateway.principals.authenticate(fx.tokens.reviewer, 'http')
    })
    after(async () => {
      await fx?.close()
    })

    test("the resource's environment changed since review: 409 conflict", async () => {
      const { plan } = await approvedPlan({ status: 'past_due', region: 'apac' })
      const moved = plansOver(changedCatalogue(fx.gateway.catalogue, (r) => ({ ...r, environment: 'billing-prod (acct 9000, host prod-db)' })))
      await assert.rejects(moved.assertCommittable(agent, plan.plan_id, plan.plan_digest), (e: any) => e.code === 'conflict' && /environment is now "billing-prod/.test(e.message) && e.details?.plan_id === plan.plan_id)
      // the config put back: the approval given before the drift was seen no longer counts (drift-reverted.test.ts)
      await assert.rejects(plansOver(fx.gateway.catalogue).assertCommittable(agent, plan.plan_id, plan.plan_digest), (e: any) => e.code === 'not_approved' && /config_drifted_since/.test(e.message))
    })

    test("the action's definition changed since review: 409 conflict", async () => {
      const { plan } = await approvedPlan({ status: 'past_due', region: 'us' })
      const redefined = plansOver(
        changedCatalogue(fx.gateway.catalogue, (r) => {
          const pause = r.config.actions.pause_collection!
          return { ...r, config: { ...r.config, actions: { ...r.config.actions, pause_collection: { ...pause, set: { ...pause.set, collection: 'canceled' } } } } }
        }),
      )
      await assert.rejects(redefined.assertCommittable(agent, plan.plan_id, plan.plan_digest), (e: any) => e.code === 'conflict' && /was redefined/.test(e.message) && e.details?.plan_id === plan.plan_id)
    })

    test('an approval of a plan the config moved under is refused (409 conflict) and changes nothing; a rejection is still taken', async () => {
      const selection = await fx.gateway.selections.create(agent, 'subscriptions', { filter: { status: 'past_due', region: 'eu', tenant: 'initech' } })
      const plan = await fx.gateway.plans.propose(agent, selection.selection_id, { action: PAUSE })
      assert.equal(plan.approval.reviewers_needed, 1)
      const decide = (plans: PlanService, decision: 'approve' | 'reject') => plans.decide(reviewer, plan.plan_id, { decision, expected_plan_digest: plan.plan_digest })
      const moved = plansOver(changedCatalogue(fx.gateway.catalogue, (r) => ({ ...r, environment: 'billing-prod (acct 9000, host prod-db)' })))
      await assert.rejects(decide(moved, 'approve'), (e: any) => e.code === 'conflict' && /environment is now "billing-prod/.test(e.message))
      const removed = plansOver(
        changedCatalogue(fx.gateway.catalogue, (r) => {
          const { pause_collection: _gone, ...rest } = r.config.actions
          return { ...r, config: { ...r.config, actions: rest } }
        }),
      )
      await assert.rejects(decide(removed, 'approve'), (e: any) => e.code === 'conflict' && /no longer configured/.test(e.message))
      const redefined = plansOver(
        changedCatalogue(fx.gateway.catalogue, (r) => {
          const pause = r.config.actions.pause_collection!
          return { ...r, config: { ...r.config, actions: { ...r.config.actions, pause_collection: { ...pause, set: { ...pause.set, collection: 'canceled' } } } } }
        }),
      )
      await assert.rejects(decide(redefined, 'approve'), (e: any) => e.code === 'conflict' && /was redefined/.test(e.message))
      // the view says so, on every surface that renders it, before anyone tries
      assert.deepEqual((await fx.gateway.plans.view(agent, plan.plan_id)).config_drift, [])
      for (const [plans, code] of [[moved, 'environment_changed'], [removed, 'action_removed'], [redefined, 'action_redefined']] as const) {
        const view = await plans.view(agent, plan.plan_id)
        assert.deepEqual(view.config_drift.map((d) => d.code), [code])
        assert.match(view.approval_state.who_can_approve, /^nobody: /)
      }
      const approvals = await fx.gateway.store.db.selectFrom('approvals').selectAll().where('plan_id', '=', plan.plan_id).execute()
      assert.deepEqual(approvals, [], 'no refused approval was recorded')
      assert.equal((await fx.gateway.plans.load(agent, plan.plan_id)).state, 'pending')
      const rejected = await decide(moved, 'reject')
      assert.equal(rejected.plan_state, 'rejected')
    })

    test('a standing approval is re-checked at commit: removed, narrowed below the count, or now flagging a member', async () => {
      const { selection, plan } = await approvedPlan(GLOBEX.filter)
      assert.equal(plan.approval.standing_approval, 'globex-past-due-eu', 'no reviewer was needed')
      assert.ok(selection.count >= 1 && selection.count <= 25, `${selection.count} members`)
      const standing = (edit: (s: Resource['config']['standing_approvals'][number]) => Resource['config']['standing_approvals'][number] | null) =>
        plansOver(
          changedCatalogue(fx.gateway.catalogue, (r) => ({
            ...r,
            config: { ...r.config, standing_approvals: r.config.standing_approvals.flatMap((s) => (s.name === 'globex-past-due-eu' ? [edit(s)].filter((x) => x !== null) : [s])) },
          })),
        )
      const cases: [string, PlanService][] = [
        ['removed from the config', standing(() => null)],
        ['max_count now below the selection', standing((s) => ({ ...s, max_count: selection.count - 1 }))],
        ['its flagged filter now matches a member', standing((s) => ({ ...s, flagged: { tenant: 'globex' } }))],
        ['its selector changed', standing((s) => ({ ...s, selector: { status: 'past_due', region: 'eu', tenant: 'initech' } }))],
        ['renamed: another approval with the same selector is not the one the plan relied on', standing((s) => ({ ...s, name: 'globex-renamed' }))],
      ]
      for (const [name, plans] of cases)
        await assert.rejects(
          plans.assertCommittable(agent, plan.plan_id, plan.plan_digest),
          (e: any) => e.code === 'not_approved' && /no longer covers/.test(e.message) && e.details?.plan_id === plan.plan_id,
          name,
        )
      // Still covered when nothing it checks changed: a flagged filter matching no member, no flagged filter at
      // all, a max_count exactly the selection's count.
      for (const edit of [
        (s: any) => ({ ...s, flagged: { tenant: 'initech' } }),
        (s: any) => ({ ...s, flagged: undefined }),
        (s: any) => ({ ...s, max_count: selection.count }),
      ]) {
        const still = await standing(edit).assertCommittable(agent, plan.plan_id, plan.plan_digest)
        assert.equal(still.standing_approval, 'globex-past-due-eu')
        assert.equal(still.plan.state, 'approved')
        assert.equal(still.plan.plan_id, plan.plan_id)
        assert.deepEqual(still.approvals, [], 'no reviewer approved it: the standing approval did')
      }
    })

    test('an approval by a reviewer disabled since no longer counts', async () => {
      const { plan } = await approvedPlan({ status: 'canceled', region: 'eu' }, { type: 'resume_collection' })
      const db = fx.gateway.store.db
      await db.updateTable('principals').set({ disabled_at: new Date().toISOString() }).where('id', '=', reviewer.principal).execute()
      try {
        await assert.rejects(fx.gateway.plans.assertCommittable(agent, plan.plan_id, plan.plan_digest), (e: any) => e.code === 'not_approved' && /has 0/.test(e.message))
        assert.equal((await fx.gateway.plans.view(agent, plan.plan_id)).state, 'pending')
      } finally {
        await db.updateTable('principals').set({ disabled_at: null }).where('id', '=', reviewer.principal).execute()
      }
      await fx.gateway.plans.assertCommittable(agent, plan.plan_id, plan.plan_digest)
    })
  })
}
