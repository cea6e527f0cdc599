import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { createLogger } from '../../src/gateway/index.js'
import { createOperationService, FINISHED_STATES } from '../../src/operations/index.js'
import { startDemoGateway } from '../support/gateway-fixture.js'
import { STORE_KINDS } from '../support/stores.js'

/**
 * An agent waiting on an operation (`wait_ms`, MCP's get_operation) is answered as the operation ends, not at the
 * next read of the store: the wait here reads the store once an hour, so only the runner's end can answer it
 * before the test's own timeout.
 */
for (const kind of STORE_KINDS) {
  describe(`waiting on an operation this process runs (${kind} store)`, () => {
    test('the wait ends with the operation, its view finished and every target settled', { timeout: 60_000 }, async () => {
      const fx = await startDemoGateway({ store: kind, count: 200, serve: false })
      const operations = createOperationService({
        store: fx.gateway.store,
        catalogue: fx.gateway.catalogue,
        selections: fx.gateway.selections,
        plans: fx.gateway.plans,
        execution: fx.gateway.config.execution,
        log: createLogger({ level: 'silent' }),
        executors: 'commits',
        waitPollMs: 3_600_000,
      })
      try {
        const gw = fx.gateway
        const agent = await gw.principals.authenticate(fx.tokens.agent, 'http')
        const reviewer = await gw.principals.authenticate(fx.tokens.reviewer, 'http')
        const selection = await gw.selections.create(agent, 'subscriptions', { filter: { status: 'past_due', collection: 'active' } })
        assert.ok(selection.count > 0)
        const action = { type: 'pause_collection', params: { reason: 'wait test' } }
        const plan = await gw.plans.propose(agent, selection.selection_id, { action })
        await gw.plans.decide(reviewer, plan.plan_id, { decision: 'approve', expected_plan_digest: plan.plan_digest })
        const receipt = await operations.commitPlan(agent, plan.plan_id, { idempotencyKey: `wait-${kind}`, expectedDigest: plan.plan_digest })
        const view = await operations.waitFor(receipt.operation_id, 3_600_000)
        assert.ok(FINISHED_STATES.has(view.state), `the wait answered ${view.state}`)
        assert.equal(view.state, 'succeeded')
        assert.equal(view.counts.succeeded, selection.count)
      } finally {
        await operations.close()
        await fx.close()
      }
    })
  })
}
