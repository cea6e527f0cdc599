import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import type { Actor, Filter } from '../../src/contract/index.js'
import type { Catalogue } from '../../src/resources/index.js'
import type { GatewayFixture } from '../support/gateway-fixture.js'
import { STORE_KINDS } from '../support/stores.js'
import { changedCatalogue, plansOver, startWithStandingApproval } from './support/changed-config.js'

/**
 * A standing approval's `flagged` filter is judged on the members as frozen, and a member keeps only the fields the
 * config of its freeze asked for (the review fields, group-by, what actions and standing approvals test). A flagged
 * filter written since on a field the members were not frozen with (`version`, `updated_at`: recently changed records
 * need a reviewer) tested a field absent from every member, matched none, and waived review: at proposal (a selection
 * frozen before the config changed, or by another instance on another config sharing the store) and at the commit's
 * re-check (the config changed after the proposal). A member without a field the filter tests cannot be judged, so
 * the standing approval does not apply, and the reason names the field.
 */

const PAUSE = { type: 'pause_collection', params: { reason: 'unfrozen flag test' } }
const GLOBEX: Filter = { region: 'eu', tenant: 'globex', status: 'past_due' }
const STANDING = 'globex-past-due-eu'
/** every demo record has version >= 1: in truth every member is flagged */
const ON_VERSION: Filter = { version: { gte: 1 } }

function withFlag(catalogue: Catalogue, flagged: Filter): Catalogue {
  return changedCatalogue(catalogue, (r) => ({
    ...r,
    config: { ...r.config, standing_approvals: r.config.standing_approvals.map((s) => (s.name === STANDING ? { ...s, flagged } : s)) },
  }))
}

for (const kind of STORE_KINDS)
  describe(`a standing approval flagging on a field the members were not frozen with (${kind} store)`, () => {
    let fx: GatewayFixture
    let agent: Actor

    before(async () => {
      fx = await startWithStandingApproval(kind, { name: STANDING, selector: GLOBEX, action: 'pause_collection', max_count: 25, flagged: { tags: { contains: 'no-such-tag' } } })
      agent = await fx.gateway.principals.authenticate(fx.tokens.agent, 'http')
    })
    after(async () => {
      await fx?.close()
    })

    test('at proposal: it does not apply, a reviewer is needed, and the reason names the field', async () => {
      const selection = await fx.gateway.selections.create(agent, 'subscriptions', { filter: GLOBEX })
      assert.ok(selection.count >= 1 && selection.count <= 25, `${selection.count} members`)
      const plan = await plansOver(fx, withFlag(fx.gateway.catalogue, ON_VERSION)).propose(agent, selection.selection_id, { action: PAUSE })
      assert.equal(plan.approval.standing_approval, null, plan.approval.reason)
      assert.equal(plan.approval.reviewers_needed, 1)
      assert.match(plan.approval.reason, new RegExp(`standing approval "${STANDING}" does not apply: .*"version".*not frozen`))
    })

    test("at commit: the re-check refuses it once the config's flagged filter tests such a field", async () => {
      const selection = await fx.gateway.selections.create(agent, 'subscriptions', { filter: GLOBEX })
      const plan = await fx.gateway.plans.propose(agent, selection.selection_id, { action: PAUSE })
      assert.equal(plan.approval.standing_approval, STANDING, 'no reviewer was needed as proposed')
      await fx.gateway.plans.assertCommittable(agent, plan.plan_id, plan.plan_digest)
      await assert.rejects(
        plansOver(fx, withFlag(fx.gateway.catalogue, ON_VERSION)).assertCommittable(agent, plan.plan_id, plan.plan_digest),
        (e: any) => e.code === 'not_approved' && /no longer covers/.test(e.message),
      )
      // a flag on a frozen field that matches no member still leaves it covered
      const still = await plansOver(fx, withFlag(fx.gateway.catalogue, { tenant: 'initech' })).assertCommittable(agent, plan.plan_id, plan.plan_digest)
      assert.equal(still.standing_approval, STANDING)
    })
  })
