import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import BetterSqlite3 from 'better-sqlite3'
import { leaseEnd } from '../../src/store/index.js'
import { type GatewayFixture, startDemoGateway } from '../support/gateway-fixture.js'
import { STORE_KINDS } from '../support/stores.js'
import { allResults, caller, selectProposeApprove, waitForOperation, type Caller } from './support/flow.js'

const REASON = 'approved credit hold review'
const ARTICLE_SELECTION = {
  filter: { status: 'past_due', region: 'eu', collection: 'active' },
  exclude: [
    { rule: 'disputed', filter: { tags: { contains: 'disputed' } } },
    { rule: 'legal_hold', filter: { tags: { contains: 'legal_hold' } } },
  ],
  fields: ['id', 'customer_name', 'status', 'amount_due', 'tags', 'collection'],
}

/** The demo upstream's rows, read straight from its SQLite file. */
function upstream(fx: GatewayFixture) {
  const db = new BetterSqlite3(fx.upstreamUrl.slice('sqlite:'.length))
  return {
    rows: (ids: readonly string[]) =>
      new Map(
        (db.prepare(`select id, status, collection, pause_reason, version from subscriptions where id in (${ids.map(() => '?').join(',')})`).all(...ids) as any[]).map((r) => [r.id, r]),
      ),
    run: (sql: string, ...params: unknown[]) => db.prepare(sql).run(...params),
    close: () => db.close(),
  }
}

for (const kind of STORE_KINDS) {
  describe(`bulk change on the demo over HTTP (${kind} store)`, () => {
    let fx: GatewayFixture
    let agent: Caller
    let reviewer: Caller
    before(async () => {
      fx = await startDemoGateway({ store: kind, count: 3000 })
      agent = fx.as('agent')
      reviewer = fx.as('reviewer')
    })
    after(async () => {
      await fx?.close()
    })

    test("the article's scenario: select, plan, approve, commit with an Idempotency-Key, per-target results, upstream changed", async () => {
      const { selection, plan } = await selectProposeApprove(agent, [reviewer], 'subscriptions', ARTICLE_SELECTION, { type: 'pause_collection', reason: REASON })
      assert.ok(selection.count > 100)
      assert.deepEqual(selection.exclusions.map((e: any) => e.rule), ['disputed', 'legal_hold'])
      assert.ok(selection.exclusions.every((e: any) => e.count > 0), 'both exclusions are shown with their counts')

      const body = { selection_id: selection.selection_id, expected_digest: selection.digest, action: { type: 'pause_collection', reason: REASON } }
      const missing = await agent('POST', '/v1/resources/subscriptions/bulk-actions', body)
      assert.equal(missing.status, 400)
      assert.equal(missing.body.error.code, 'idempotency_key_missing')

      const key = '9b03c6f0-7dfa-4f22-b0e5-4b52ca4f1a51'
      const commit = await agent('POST', '/v1/resources/subscriptions/bulk-actions', body, { 'idempotency-key': key })
      assert.equal(commit.status, 202, JSON.stringify(commit.body))
      assert.equal(commit.body.plan_id, plan.plan_id)
      assert.equal(commit.body.target_count, selection.count)
      assert.equal(commit.body.results_url, `/v1/operations/${commit.body.operation_id}/results`)
      assert.ok(!('ok' in commit.body))

      const replay = await agent('POST', '/v1/resources/subscriptions/bulk-actions', body, { 'idempotency-key': key })
      assert.equal(replay.status, 200)
      assert.equal(replay.body.operation_id, commit.body.operation_id)
      const reused = await agent('POST', '/v1/resources/subscriptions/bulk-actions', { ...body, action: { type: 'pause_collection', reason: 'something else' } }, { 'idempotency-key': key })
      assert.equal(reused.status, 422)
      assert.equal(reused.body.error.code, 'idempotency_key_reused')

      const operation = await waitForOperation(agent, commit.body.operation_id)
      assert.equal(operation.state, 'succeeded')
      assert.equal(operation.resource, 'subscriptions')
      assert.match(operation.environment, /billing-demo/)
      assert.deepEqual(operation.counts, { pending: 0, in_flight: 0, succeeded: selection.count, failed: 0, skipped: 0, unknown: 0 })
      assert.equal(operation.halt_reason, null)
      assert.equal(operation.stop_rules.revalidate_membership_per_batch, false)

      const results = await allResults(agent, commit.body.operation_id)
      assert.equal(results.length, selection.count)
      assert.ok(results.every((r) => r.outcome === 'succeeded' && r.upstream_status === null), 'a database answers no HTTP status: none is shown as the upstream\'s')
      assert.deepEqual(results[0].before, { collection: 'active', pause_reason: '' })
      assert.deepEqual(results[0].after, { collection: 'paused', pause_reason: REASON })
      const up = upstream(fx)
      try {
        const rows = up.rows(results.map((r) => r.id))
        assert.equal(rows.size, selection.count)
        for (const row of rows.values()) {
          assert.equal(row.collection, 'paused')
          assert.equal(row.pause_reason, REASON)
          assert.equal(row.version, 2, `${row.id} written exactly once`)
        }
      } finally {
        up.close()
      }
      const planAfter = await agent('GET', `/v1/plans/${plan.plan_id}`)
      assert.equal(planAfter.body.state, 'committed')

      // Both audit levels name the operation: who committed (run), every upstream write (call), and the end.
      const audit = await reviewer('GET', `/v1/audit?operation_id=${commit.body.operation_id}&limit=1000`)
      assert.equal(audit.status, 200, JSON.stringify(audit.body))
      const events = audit.body.events as any[]
      assert.ok(events.some((e) => e.level === 'run' && e.action === 'operation.finished'))
      const writes = events.filter((e) => e.level === 'call' && /UPDATE/.test(e.action))
      assert.equal(writes.length, selection.count, 'one call-level event per upstream write')
      assert.ok(writes.every((e) => JSON.stringify(e).includes(selection.digest)), 'each names the selection digest')
    })

    test('the OpenAPI document describes the commit and operation endpoints', async () => {
      const doc = await agent('GET', '/openapi.json')
      assert.equal(doc.status, 200)
      for (const path of ['/v1/plans/{id}/commit', '/v1/resources/{resource}/bulk-actions', '/v1/operations/{id}', '/v1/operations/{id}/results', '/v1/operations/{id}/reconcile', '/v1/operations/{id}/compensation'])
        assert.ok(doc.body.paths[path], path)
      assert.ok(doc.body.components.schemas.Operation && doc.body.components.schemas.HaltReason)
    })

    test('records changed between preview and commit are skipped, not written', async () => {
      const { selection, plan } = await selectProposeApprove(agent, [reviewer], 'subscriptions', { ...ARTICLE_SELECTION, filter: { ...ARTICLE_SELECTION.filter, region: 'us' } }, { type: 'pause_collection', reason: REASON })
      const [a, b, c] = selection.records.map((r: any) => r.id) as string[]
      const up = upstream(fx)
      try {
        up.run("update subscriptions set status = 'active', amount_due = 0, version = version + 1 where id = ?", a) // paid meanwhile
        up.run('update subscriptions set version = version + 1 where id = ?', b) // touched meanwhile
        up.run("update subscriptions set collection = 'paused' where id = ?", c) // precondition fails, same version
      } finally {
        up.close()
      }
      const commit = await agent('POST', `/v1/plans/${plan.plan_id}/commit`, { expected_digest: plan.plan_digest }, { 'idempotency-key': `k-stale-${kind}` })
      assert.equal(commit.status, 202, JSON.stringify(commit.body))
      const operation = await waitForOperation(agent, commit.body.operation_id)
      assert.equal(operation.state, 'completed_with_skips')
      assert.equal(operation.counts.skipped, 3)
      assert.equal(operation.counts.succeeded, selection.count - 3)
      const skipped = await allResults(agent, commit.body.operation_id, 'skipped')
      assert.deepEqual(skipped.map((r) => [r.id, r.reason]), [[a, 'version_changed'], [b, 'version_changed'], [c, 'precondition_failed']])
      const after = upstream(fx)
      try {
        const rows = after.rows([a!, b!, c!])
        assert.equal(rows.get(a!).collection, 'active', 'not written')
        assert.equal(rows.get(b!).collection, 'active', 'not written')
        assert.equal(rows.get(c!).pause_reason, '', 'not written')
        assert.deepEqual([rows.get(a!).version, rows.get(b!).version, rows.get(c!).version], [2, 2, 1])
      } finally {
        after.close()
      }
    })

    test('refusals: digest mismatch 409, not approved 403, approval of another action 403, scope 403, unknown 404', async () => {
      const selection = await agent('POST', '/v1/resources/subscriptions/selections', { filter: { status: 'past_due', region: 'apac', collection: 'active' } })
      assert.equal(selection.status, 201)
      const plan = await agent('POST', `/v1/selections/${selection.body.selection_id}/plans`, { action: { type: 'pause_collection', params: { reason: REASON } } })
      const unapproved = await agent('POST', `/v1/plans/${plan.body.plan_id}/commit`, { expected_digest: plan.body.plan_digest }, { 'idempotency-key': `k-unapproved-${kind}` })
      assert.equal(unapproved.status, 403)
      assert.equal(unapproved.body.error.code, 'not_approved')
      await reviewer('POST', `/v1/plans/${plan.body.plan_id}/approvals`, { decision: 'approve', expected_plan_digest: plan.body.plan_digest })

      const wrongPlanDigest = await agent('POST', `/v1/plans/${plan.body.plan_id}/commit`, { expected_digest: 'sha256:0000' }, { 'idempotency-key': `k-d1-${kind}` })
      assert.equal(wrongPlanDigest.status, 409)
      assert.equal(wrongPlanDigest.body.error.code, 'digest_mismatch')
      const bulk = { selection_id: selection.body.selection_id, expected_digest: selection.body.digest, action: { type: 'pause_collection', reason: REASON } }
      const wrongSelectionDigest = await agent('POST', '/v1/resources/subscriptions/bulk-actions', { ...bulk, expected_digest: 'sha256:4c76' }, { 'idempotency-key': `k-d2-${kind}` })
      assert.equal(wrongSelectionDigest.status, 409)
      assert.equal(wrongSelectionDigest.body.error.code, 'digest_mismatch')
      // The digest is checked before any plan is looked up: a stale digest is named as such even for an unplanned action.
      const staleUnplanned = await agent('POST', '/v1/resources/subscriptions/bulk-actions', { ...bulk, expected_digest: 'sha256:4c76', action: { type: 'resume_collection' } }, { 'idempotency-key': `k-d2u-${kind}` })
      assert.equal(staleUnplanned.status, 409)
      assert.equal(staleUnplanned.body.error.code, 'digest_mismatch')
      const otherAction = await agent('POST', '/v1/resources/subscriptions/bulk-actions', { ...bulk, action: { type: 'resume_collection' } }, { 'idempotency-key': `k-d3-${kind}` })
      assert.equal(otherAction.status, 403, 'the approval is bound to pause_collection')
      assert.equal(otherAction.body.error.code, 'not_approved')
      const otherParams = await agent('POST', '/v1/resources/subscriptions/bulk-actions', { ...bulk, action: { type: 'pause_collection', reason: 'another reason' } }, { 'idempotency-key': `k-d4-${kind}` })
      assert.equal(otherParams.status, 403)

      const narrow = (await fx.gateway.principals.issue({ name: 'narrow', role: 'agent', scopes: { resources: ['subscriptions'], actions: ['resume_collection'] } })).token
      const outOfScope = await caller(fx.base, narrow)('POST', '/v1/resources/subscriptions/bulk-actions', bulk, { 'idempotency-key': `k-d5-${kind}` })
      assert.equal(outOfScope.status, 403)
      assert.equal(outOfScope.body.error.code, 'forbidden')
      // Each form refuses the scope before anything else it checks: nothing about the selection or the plan is revealed.
      const unknownSelection = await caller(fx.base, narrow)('POST', '/v1/resources/subscriptions/bulk-actions', { ...bulk, selection_id: 'sel_nope' }, { 'idempotency-key': `k-d6-${kind}` })
      assert.equal(unknownSelection.status, 403)
      assert.equal(unknownSelection.body.error.code, 'forbidden')
      const wrongDigestOutOfScope = await caller(fx.base, narrow)('POST', `/v1/plans/${plan.body.plan_id}/commit`, { expected_digest: 'sha256:0000' }, { 'idempotency-key': `k-d7-${kind}` })
      assert.equal(wrongDigestOutOfScope.status, 403)
      assert.equal(wrongDigestOutOfScope.body.error.code, 'forbidden')
      const unknown = await agent('GET', '/v1/operations/op_nope')
      assert.equal(unknown.status, 404)
      // The articles' rule: a commit carries the digest the reviewer saw. Missing in any shape → 400 naming the field.
      const noDigest = [
        await agent('POST', `/v1/plans/${plan.body.plan_id}/commit`, undefined, { 'idempotency-key': `k-nd1-${kind}` }),
        await agent('POST', `/v1/plans/${plan.body.plan_id}/commit`, {}, { 'idempotency-key': `k-nd2-${kind}` }),
        await agent('POST', `/v1/plans/${plan.body.plan_id}/commit`, { expected_plan_digest: plan.body.plan_digest }, { 'idempotency-key': `k-nd3-${kind}` }),
        await agent('POST', `/v1/plans/${plan.body.plan_id}/commit`, { expected_digest: '' }, { 'idempotency-key': `k-nd4-${kind}` }),
        await agent('POST', '/v1/resources/subscriptions/bulk-actions', { selection_id: bulk.selection_id, action: bulk.action }, { 'idempotency-key': `k-nd5-${kind}` }),
      ]
      for (const refused of noDigest) {
        assert.equal(refused.status, 400, JSON.stringify(refused.body))
        assert.equal(refused.body.error.code, 'invalid_request')
        assert.match(refused.body.error.message, /expected_digest/)
      }
      const raw = await fetch(`${fx.base}/v1/plans/${plan.body.plan_id}/commit`, {
        method: 'POST',
        headers: { authorization: `Bearer ${fx.tokens.agent}`, 'idempotency-key': `k-nd6-${kind}`, 'content-type': 'text/plain' },
        body: 'expected_digest',
      })
      assert.equal(raw.status, 400, 'a body that is not JSON skips the route schema; the service still refuses')
      assert.equal(((await raw.json()) as any).error.code, 'invalid_request')
      assert.equal((await agent('GET', `/v1/plans/${plan.body.plan_id}`)).body.state, 'approved', 'the refused commits committed nothing')

      const digest = { expected_digest: plan.body.plan_digest }
      const missingKey = await agent('POST', `/v1/plans/${plan.body.plan_id}/commit`, digest)
      assert.equal(missingKey.status, 400)
      assert.equal(missingKey.body.error.code, 'idempotency_key_missing')

      const ok = await agent('POST', `/v1/plans/${plan.body.plan_id}/commit`, digest, { 'idempotency-key': `k-ok-${kind}` })
      assert.equal(ok.status, 202, JSON.stringify(ok.body))
      const again = await agent('POST', `/v1/plans/${plan.body.plan_id}/commit`, digest, { 'idempotency-key': `k-ok-${kind}` })
      assert.deepEqual([again.status, again.body.operation_id], [200, ok.body.operation_id])
      const secondKey = await agent('POST', `/v1/plans/${plan.body.plan_id}/commit`, digest, { 'idempotency-key': `k-ok2-${kind}` })
      assert.equal(secondKey.status, 409, 'a plan is committed once')
      await waitForOperation(agent, ok.body.operation_id)

      const compensation = await agent('POST', `/v1/operations/${ok.body.operation_id}/compensation`)
      assert.equal(compensation.status, 201, JSON.stringify(compensation.body))
      assert.equal(compensation.body.compensates, ok.body.operation_id)
      assert.equal(compensation.body.target_count, selection.body.count)
      assert.equal(compensation.body.state, 'pending', 'a compensation needs approval like any plan')
    })
  })

  describe(`an expired approval is refused (${kind} store)`, () => {
    test('410 expired, nothing written', async () => {
      // The gateway's clock is moved past the approval's 15 minutes (and short of the selection's 30), not waited for.
      let skew = 0
      const fx = await startDemoGateway({ store: kind, count: 500, clock: () => new Date(Date.now() + skew) })
      try {
        const { plan } = await selectProposeApprove(fx.as('agent'), [fx.as('reviewer'), fx.as('reviewer2')], 'subscriptions', ARTICLE_SELECTION, { type: 'pause_collection', reason: REASON })
        skew = 16 * 60_000
        // the store's clock is the database's on PostgreSQL, which no injected clock moves: lapsed a second ago by it
        if (kind === 'postgres') await fx.gateway.store.db.updateTable('approvals').set({ expires_at: leaseEnd(fx.gateway.store.db, '', -1_000) }).where('plan_id', '=', plan.plan_id).execute()
        const commit = await fx.as('agent')('POST', `/v1/plans/${plan.plan_id}/commit`, { expected_digest: plan.plan_digest }, { 'idempotency-key': 'k-expired' })
        assert.equal(commit.status, 410, JSON.stringify(commit.body))
        assert.equal(commit.body.error.code, 'expired')
        assert.match(commit.body.error.message, /the approval of plan .* expired/, 'the approval lapsed, not the selection')
        const ops = await fx.gateway.store.db.selectFrom('operations').select('id').execute()
        assert.equal(ops.length, 0)
      } finally {
        await fx.close()
      }
    })
  })
}
