import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { after, before, describe, test } from 'node:test'
import { parseConfig, resolvePaths } from '../../src/config/index.js'
import type { Actor } from '../../src/contract/index.js'
import { createLogger, openGateway } from '../../src/gateway/index.js'
import { type GatewayFixture, startDemoGateway } from '../support/gateway-fixture.js'

/**
 * A compensation restores the before-values an operation read in its environment. Proposed after the resource
 * was pointed at another environment (a restart on an edited config), it is refused: the new selection and plan
 * took the resource's current environment, so the commit's own environment check passed and the old
 * environment's before-values would be written to the records of the same ids in the new one.
 */
describe('a compensation is proposed only in the environment its operation wrote to', () => {
  let fx: GatewayFixture
  let raw: Record<string, any> = {}
  before(async () => {
    fx = await startDemoGateway({ store: 'sqlite', count: 200, serve: false, edit: (config) => (raw = structuredClone(config)) })
  })
  after(async () => {
    await fx?.close()
  })

  test('the resource now points at another environment: 409 conflict naming both; in its own it is proposed', async () => {
    const agent: Actor = await fx.gateway.principals.authenticate(fx.tokens.agent, 'http')
    const reviewer: Actor = await fx.gateway.principals.authenticate(fx.tokens.reviewer, 'http')
    const selection = await fx.gateway.selections.create(agent, 'subscriptions', { filter: { status: 'past_due', region: 'apac', collection: 'active' } })
    const plan = await fx.gateway.plans.propose(agent, selection.selection_id, { action: { type: 'pause_collection', params: { reason: 'env test' } } })
    if (plan.approval.reviewers_needed > 0) await fx.gateway.plans.decide(reviewer, plan.plan_id, { decision: 'approve', expected_plan_digest: plan.plan_digest })
    const receipt = await fx.gateway.operations.commitPlan(agent, plan.plan_id, { idempotencyKey: randomUUID(), expectedDigest: plan.plan_digest })
    const done = await fx.gateway.operations.waitFor(receipt.operation_id, 30_000)
    assert.ok(done.counts.succeeded > 0, JSON.stringify(done.counts))

    const edited = structuredClone(raw)
    edited.resources.subscriptions.environment = { name: 'billing-prod', account: '9000', host: 'prod-db' }
    // a second gateway on the same store, as a restart on the edited config: the same principals and tokens. Two
    // gateways on one SQLite file in one process take turns: each hands over with nothing left to append (a row
    // lingering in one would meet the other's write transaction, and better-sqlite3 waits synchronously)
    await fx.gateway.audit.flush()
    const moved = await openGateway({ config: resolvePaths(parseConfig(edited, 'moved config'), fx.dir), log: createLogger({ level: 'silent' }) })
    try {
      const movedAgent = await moved.principals.authenticate(fx.tokens.agent, 'http')
      await assert.rejects(moved.operations.proposeCompensation(movedAgent, receipt.operation_id), (e: any) => e.code === 'conflict' && /billing-prod/.test(e.message) && /billing-demo/.test(e.message))
      await moved.audit.flush()
    } finally {
      await moved.close()
    }
    const compensation = (await fx.gateway.operations.proposeCompensation(agent, receipt.operation_id)) as any
    assert.equal(compensation.environment, plan.environment)
  })
})
