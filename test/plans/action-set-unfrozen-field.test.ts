import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import type { Actor } from '../../src/contract/index.js'
import type { PlanService } from '../../src/plans/index.js'
import type { Catalogue } from '../../src/resources/index.js'
import { type GatewayFixture, startDemoGateway } from '../support/gateway-fixture.js'
import { STORE_KINDS } from '../support/stores.js'
import { changedCatalogue, plansOver as plansOverCatalogue } from './support/changed-config.js'

/**
 * A plan's preview shows each set field's values before → after from the members as frozen, and a member keeps only the
 * fields the config of its freeze asked for (those its actions set among them). An action added since (or by another
 * instance's config on the same store) that sets a field the members were not frozen with (`updated_at`) was previewed
 * from a field absent on every member: "before: null" for all of them, values nobody read, and where the action set
 * null, every member "unchanged". Such a proposal is refused, 409 `conflict` naming the field and the action, and
 * what to do (a new selection); nothing is proposed.
 */

const TOUCH = { type: 'touch', params: {} }
const STAMP = '2026-01-01T00:00:00.000Z'

function withTouch(catalogue: Catalogue): Catalogue {
  return changedCatalogue(catalogue, (r) => ({
    ...r,
    config: {
      ...r.config,
      actions: { ...r.config.actions, touch: { ...r.config.actions.pause_collection!, description: 'stamp updated_at', params: {}, set: { updated_at: STAMP }, precondition: {} } },
    },
  }))
}

for (const kind of STORE_KINDS)
  describe(`an action setting a field the members were not frozen with (${kind} store)`, () => {
    let fx: GatewayFixture
    let agent: Actor
    const plansOver = (catalogue: Catalogue): PlanService => plansOverCatalogue(fx, catalogue)

    before(async () => {
      fx = await startDemoGateway({ store: kind, count: 60, serve: false })
      agent = await fx.gateway.principals.authenticate(fx.tokens.agent, 'http')
    })
    after(async () => {
      await fx?.close()
    })

    test('is refused 409 naming the field and the action, nothing proposed; an action whose fields were frozen is proposed on it', async () => {
      const plans = plansOver(withTouch(fx.gateway.catalogue))
      const selection = await fx.gateway.selections.create(agent, 'subscriptions', { filter: { region: 'eu' } })
      assert.ok(selection.count > 0)
      await assert.rejects(
        plans.propose(agent, selection.selection_id, { action: TOUCH }),
        (e: any) => e.code === 'conflict' && /"updated_at"/.test(e.message) && /touch/.test(e.message) && /not frozen/.test(e.message) && /new selection/.test(e.message),
      )
      assert.equal((await fx.gateway.store.db.selectFrom('plans').select('id').where('selection_id', '=', selection.selection_id).execute()).length, 0, 'nothing proposed')
      const paused = await plans.propose(agent, selection.selection_id, { action: { type: 'pause_collection', params: { reason: 'frozen fields' } } })
      assert.equal(paused.selection_id, selection.selection_id)
    })
  })
