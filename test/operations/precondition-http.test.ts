import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import type { GatewayFixture } from '../support/gateway-fixture.js'
import { allResults, caller, selectProposeApprove, waitForOperation } from './support/flow.js'
import { docIdOf, startDocsGateway, startDocsUpstream, type DocsUpstream } from './support/docs-upstream.js'

/**
 * The action's precondition is checked by the executor on every target before its write. An sql upstream also
 * checks it in the UPDATE; an http upstream does not (the docs API applies any PATCH at the current revision), so
 * there the executor's check is the only thing between a target that fails the precondition and a write.
 */
describe("a target that does not meet the action's precondition is skipped, never sent (http upstream)", () => {
  test('two documents already paused when selected: the precondition (status active) skips them; the other four are written', async () => {
    const upstream: DocsUpstream = await startDocsUpstream(6)
    let fx: GatewayFixture | undefined
    try {
      fx = await startDocsGateway(upstream)
      // paused before the selection: their revisions are the ones frozen, so only the precondition can stop them
      upstream.touch(docIdOf(1), { status: 'paused' })
      upstream.touch(docIdOf(2), { status: 'paused' })
      const token = (await fx.gateway.principals.issue({ name: 'docs-agent', role: 'agent', scopes: { resources: ['docs'], actions: '*' } })).token
      const agent = caller(fx.base, token)
      const action = { type: 'set_status', status: 'archived' }
      const { selection } = await selectProposeApprove(agent, [fx.as('reviewer')], 'docs', { filter: {} }, action)
      assert.equal(selection.count, 6)
      const commit = await agent('POST', '/v1/resources/docs/bulk-actions', { selection_id: selection.selection_id, expected_digest: selection.digest, action }, { 'idempotency-key': 'archive-docs' })
      assert.equal(commit.status, 202, JSON.stringify(commit.body))
      const operation = await waitForOperation(agent, commit.body.operation_id)
      assert.deepEqual([operation.counts.succeeded, operation.counts.skipped], [4, 2], JSON.stringify(operation.counts))
      const skipped = await allResults(agent, operation.operation_id, 'skipped')
      assert.deepEqual(skipped.map((r) => [r.id, r.reason]).sort(), [[docIdOf(1), 'precondition_failed'], [docIdOf(2), 'precondition_failed']])
      assert.ok(skipped.every((r) => /no longer meets the precondition/.test(r.error)), JSON.stringify(skipped))
      assert.deepEqual(upstream.writes.filter((w) => w.endsWith(docIdOf(1)) || w.endsWith(docIdOf(2))), [], 'nothing was sent for them')
      assert.deepEqual([1, 2].map((i) => upstream.doc(docIdOf(i)).status), ['paused', 'paused'])
      assert.deepEqual([3, 4, 5, 6].map((i) => upstream.doc(docIdOf(i)).status), ['archived', 'archived', 'archived', 'archived'])
    } finally {
      await fx?.close()
      await upstream.close()
    }
  })
})
