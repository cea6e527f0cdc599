import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import type { Actor } from '../../src/contract/index.js'
import { createLogger } from '../../src/gateway/index.js'
import { leaseEnd } from '../../src/store/index.js'
import { createOperationService } from '../../src/operations/index.js'
import type { PlanService } from '../../src/plans/index.js'
import { startDemoGateway } from '../support/gateway-fixture.js'
import { STORE_KINDS } from '../support/stores.js'
import { startOddUpstream, thingsResourceConfig } from '../plans/support/odd-upstream.js'

/**
 * A commit checks the approval (`assertCommittable`), then records the operation. What happens between the two was
 * not looked at again: an approval that lapsed, a reviewer disabled, or the plan rejected in that moment still
 * committed (a rejection was refused, but as "already committed"). The moment is milliseconds wide; here it is made
 * certain by an operation service whose plan service does the deed right after its own check passed, on the
 * gateway's injected clock. The recorded operation must stand on an approval that holds when it is recorded.
 */
type Gw = Awaited<ReturnType<typeof startDemoGateway>>['gateway']
type Deed = (ctx: { gw: Gw; plan: { plan_id: string; plan_digest: string }; clock: { now: number }; alice: Actor; bob: Actor }) => Promise<void>

/** Time passes for the store: its injected clock on SQLite; on PostgreSQL the database's, so the approval is set to have lapsed a second ago by it. */
const later = async (gw: Gw, planId: string, clock: { now: number }, ms: number) => {
  clock.now += ms
  if (gw.store.dialect === 'postgres') await gw.store.db.updateTable('approvals').set({ expires_at: leaseEnd(gw.store.db, '', -1_000) }).where('plan_id', '=', planId).execute()
}

const deeds: readonly { name: string; deed: Deed; refusal: (e: any) => boolean }[] = [
  {
    name: 'the approval lapses',
    // the default approval lasts 15 minutes, the selection 30
    deed: async ({ gw, plan, clock }) => later(gw, plan.plan_id, clock, 16 * 60_000),
    refusal: (e) => e.code === 'expired' && /approval of plan .* expired/.test(e.message),
  },
  {
    name: 'the plan is rejected',
    deed: async ({ gw, plan, bob }) => void (await gw.plans.decide(bob, plan.plan_id, { decision: 'reject', expected_plan_digest: plan.plan_digest })),
    refusal: (e) => e.code === 'conflict' && /rejected/.test(e.message) && !/already committed/.test(e.message),
  },
  {
    name: 'the approving reviewer is disabled',
    deed: async ({ gw, clock, alice }) => void (await gw.store.db.updateTable('principals').set({ disabled_at: new Date(clock.now).toISOString() }).where('id', '=', alice.principal).execute()),
    refusal: (e) => e.code === 'not_approved',
  },
]

for (const kind of STORE_KINDS) {
  describe(`a commit whose approval stops holding between its check and the recording of the operation (${kind} store)`, () => {
    for (const { name, deed, refusal } of deeds) {
      test(`${name}: refused, no operation recorded, the plan not committed, nothing written`, async () => {
        const upstream = await startOddUpstream()
        const clock = { now: Date.parse('2030-01-01T10:00:00.000Z') }
        const fx = await startDemoGateway({ store: kind, count: 20, serve: false, clock: () => new Date(clock.now), edit: (c) => void (c.resources.things = thingsResourceConfig(upstream.origin)) })
        try {
          const gw = fx.gateway
          const agent = await gw.principals.authenticate((await gw.principals.issue({ name: 'things-agent', role: 'agent', scopes: { resources: ['things'], actions: '*' } })).token, 'http')
          const alice = await gw.principals.authenticate(fx.tokens.reviewer, 'http')
          const bob = await gw.principals.authenticate(fx.tokens.reviewer2, 'http')
          const selection = await gw.selections.create(agent, 'things', { filter: { status: 'open' } })
          const plan = await gw.plans.propose(agent, selection.selection_id, { action: { type: 'set_status', params: { status: 'closed' } } })
          await gw.plans.decide(alice, plan.plan_id, { decision: 'approve', expected_plan_digest: plan.plan_digest })

          let raced = 0
          const plans: PlanService = {
            ...gw.plans,
            async assertCommittable(actor, planId, expected) {
              const committable = await gw.plans.assertCommittable(actor, planId, expected)
              raced += 1
              await deed({ gw, plan, clock, alice, bob })
              return committable
            },
          }
          const operations = createOperationService({
            store: gw.store,
            catalogue: gw.catalogue,
            selections: gw.selections,
            plans,
            execution: gw.config.execution,
            log: createLogger({ level: 'silent' }),
            executors: false,
            clock: () => new Date(clock.now),
          })
          try {
            await assert.rejects(operations.commitPlan(agent, plan.plan_id, { idempotencyKey: `race-${kind}`, expectedDigest: plan.plan_digest }), refusal)
          } finally {
            await operations.close()
          }
          assert.equal(raced, 1, 'the deed happened after the check passed')
          const ops = await gw.store.db.selectFrom('operations').select('id').where('plan_id', '=', plan.plan_id).execute()
          assert.deepEqual(ops, [], 'no operation was recorded')
          const row = await gw.store.db.selectFrom('plans').select('state').where('id', '=', plan.plan_id).executeTakeFirstOrThrow()
          assert.notEqual(row.state, 'committed')
          assert.equal(upstream.writes.size, 0)
        } finally {
          await fx.close()
          await upstream.close()
        }
      })
    }
  })
}
