import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { startDemoGateway, type GatewayFixture } from '../support/gateway-fixture.js'
import { STORE_KINDS } from '../support/stores.js'
import { openDemoUpstream } from './support/demo-upstream.js'
import { allResults, selectProposeApprove, waitForOperation } from './support/flow.js'

const REASON = 'approved credit hold review'
const SELECTION = { filter: { status: 'past_due', collection: 'active' }, fields: ['id', 'status', 'collection'] }

/**
 * A database answers no HTTP status. The sql connector classifies its own answers with HTTP-like codes (200 for a
 * row written, 422 for a value the database refused…) for the executor's judgement; recorded as the target's
 * `upstream_status`, they were shown as what "the upstream" answered (`upstream 200` in the CLI, the review page's
 * "Upstream status" column), which no upstream ever said. A sql target's `upstream_status` is null, written or
 * refused, on a SQLite file and on a PostgreSQL table.
 */
for (const kind of STORE_KINDS) {
  describe(`a sql operation records no upstream status (${kind} store and upstream)`, () => {
    let fx: GatewayFixture
    before(async () => {
      fx = await startDemoGateway({ store: kind, upstream: kind === 'postgres' ? 'postgres' : 'sqlite', count: 120, edit: (raw) => void (raw.execution = { ...raw.execution, halt_after_validation_failures: 5 }) })
    })
    after(async () => {
      await fx?.close()
    })

    test('succeeded and refused targets both carry upstream_status null', async () => {
      const agent = fx.as('agent')
      const { selection } = await selectProposeApprove(agent, [fx.as('reviewer')], 'subscriptions', SELECTION, { type: 'pause_collection', reason: REASON })
      assert.ok(selection.count >= 3, `selection of ${selection.count}`)
      const refused = selection.records[1].id as string
      // the database itself refuses the write of one row (a CHECK violation / a trigger's ABORT): a `rejected` target
      const up = await openDemoUpstream(fx.upstreamUrl)
      try {
        if (kind === 'postgres') await up.run(`alter table subscriptions add constraint refused_write check (id <> '${refused}' or collection <> 'paused')`)
        else await up.run(`create trigger refused_write before update on subscriptions when old.id = '${refused}' begin select raise(abort, 'refused by the test'); end`)
      } finally {
        await up.close()
      }
      const body = { selection_id: selection.selection_id, expected_digest: selection.digest, action: { type: 'pause_collection', reason: REASON } }
      const commit = await agent('POST', '/v1/resources/subscriptions/bulk-actions', body, { 'idempotency-key': `sql-status-${kind}` })
      assert.equal(commit.status, 202, JSON.stringify(commit.body))
      await waitForOperation(agent, commit.body.operation_id)
      const results = await allResults(agent, commit.body.operation_id)
      const failed = results.filter((r) => r.outcome === 'failed')
      assert.deepEqual(failed.map((r) => [r.id, r.reason]), [[refused, 'rejected']], JSON.stringify(failed))
      assert.ok(results.filter((r) => r.outcome === 'succeeded').length >= 1)
      const shown = results.filter((r) => r.upstream_status !== null).map((r) => [r.id, r.outcome, r.upstream_status])
      assert.deepEqual(shown, [], 'no sql target shows an upstream status')
    })
  })
}
