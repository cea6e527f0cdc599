import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { ERROR_STATUS } from '../../src/contract/index.js'
import { createLogger } from '../../src/gateway/index.js'
import { createOperationService } from '../../src/operations/index.js'
import type { PlanService } from '../../src/plans/index.js'
import { startDemoGateway } from '../support/gateway-fixture.js'
import { STORE_KINDS } from '../support/stores.js'

/**
 * The committer was authenticated as its request arrived, with the role and scopes its principal had then. An
 * operator who narrows that principal's scope (the action, or the resource, taken out) while the commit is under
 * way must see it refused: the commit transaction rechecked a disable and a revocation, not the scope, so the
 * operation was recorded on a scope the principal no longer had. The change lands between the commit's check
 * (`assertCommittable`, on the request's actor) and its transaction, through a wrapped plan service.
 */
type Fx = Awaited<ReturnType<typeof startDemoGateway>>
const PAUSE = { type: 'pause_collection', params: { reason: 'scope race' } }

async function approvedPlan(fx: Fx) {
  const gw = fx.gateway
  const issued = await gw.principals.issue({ name: 'scope-agent', role: 'agent', scopes: { resources: ['subscriptions'], actions: ['pause_collection'] } })
  const agent = await gw.principals.authenticate(issued.token, 'http')
  const reviewer = await gw.principals.authenticate(fx.tokens.reviewer, 'http')
  const selection = await gw.selections.create(agent, 'subscriptions', { filter: { status: 'past_due', region: 'eu' } })
  const plan = await gw.plans.propose(agent, selection.selection_id, { action: PAUSE })
  await gw.plans.decide(reviewer, plan.plan_id, { decision: 'approve', expected_plan_digest: plan.plan_digest })
  return { issued, agent, plan }
}

const changes = [
  { name: 'its scope no longer holds the action', set: { scopes: JSON.stringify({ resources: ['subscriptions'], actions: ['resume_collection'] }) } },
  { name: 'its scope no longer holds the resource', set: { scopes: JSON.stringify({ resources: ['invoices'], actions: '*' }) } },
  { name: 'its role and scope changed together (agent → reviewer scoped elsewhere)', set: { role: 'reviewer' as const, scopes: JSON.stringify({ resources: ['invoices'], actions: '*' }) } },
]

for (const kind of STORE_KINDS) {
  describe(`a committer whose authority changes while its commit is under way (${kind} store)`, () => {
    for (const change of changes) {
      test(`${change.name} between the commit's check and its transaction: 403 naming why, nothing committed`, async () => {
        const fx = await startDemoGateway({ store: kind, count: 300, serve: false })
        try {
          const gw = fx.gateway
          const { issued, agent, plan } = await approvedPlan(fx)
          const plans: PlanService = {
            ...gw.plans,
            async assertCommittable(actor, planId, expected) {
              const committable = await gw.plans.assertCommittable(actor, planId, expected)
              await gw.store.db.updateTable('principals').set(change.set).where('id', '=', issued.principal_id).execute()
              return committable
            },
          }
          const operations = createOperationService({ store: gw.store, catalogue: gw.catalogue, selections: gw.selections, plans, execution: gw.config.execution, log: createLogger({ level: 'silent' }), executors: false })
          try {
            await assert.rejects(operations.commitPlan(agent, plan.plan_id, { idempotencyKey: `scope-${kind}`, expectedDigest: plan.plan_digest }), (e: any) => {
              assert.equal(e.code, 'forbidden', String(e))
              assert.equal(ERROR_STATUS.forbidden, 403)
              assert.match(e.message, /action "pause_collection" on "subscriptions" is no longer within the committer's scope/)
              assert.match(e.message, /nothing was committed/)
              assert.deepEqual([e.details?.resource, e.details?.action, e.details?.reason], ['subscriptions', 'pause_collection', 'committer_out_of_scope'])
              return true
            })
          } finally {
            await operations.close()
          }
          const ops = await gw.store.db.selectFrom('operations').select('id').where('plan_id', '=', plan.plan_id).execute()
          assert.deepEqual(ops, [])
          assert.equal((await gw.store.db.selectFrom('plans').select('state').where('id', '=', plan.plan_id).executeTakeFirstOrThrow()).state, 'approved')
        } finally {
          await fx.close()
        }
      })
    }
  })
}
