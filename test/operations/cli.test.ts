import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { createCliWorkspace } from '../support/cli-config.js'
import { createTestPostgresDatabase, STORE_KINDS, type TestDatabase } from '../support/stores.js'

const REASON = 'approved credit hold review'

for (const kind of STORE_KINDS) {
  describe(`warrant commit and warrant operation (real subprocesses, ${kind} store)`, () => {
    let ws: Awaited<ReturnType<typeof createCliWorkspace>>
    let pg: TestDatabase | null = null
    let reviewerToken = ''
    before(async () => {
      pg = kind === 'postgres' ? await createTestPostgresDatabase() : null
      ws = await createCliWorkspace({ count: 1500, edit: (raw) => void (pg ? (raw.store = pg.url) : undefined) })
      const issued = await ws.warrant(['token', 'create', '--role', 'reviewer', '--name', 'alice', '--json'])
      assert.equal(issued.code, 0, issued.stderr)
      reviewerToken = JSON.parse(issued.stdout).token
    })
    after(async () => {
      await ws?.drop()
      await pg?.drop()
    })

    /** select → plan → approve through the CLI; returns the plan. */
    async function approvedPlan(region: string): Promise<{ plan_id: string; plan_digest: string; selection_digest: string; target_count: number }> {
      const selected = await ws.warrant(['select', 'subscriptions', '-f', 'status=past_due', '-f', `region=${region}`, '-f', 'collection=active', '-x', 'disputed:tags~disputed', '-x', 'legal_hold:tags~legal_hold', '--json'])
      assert.equal(selected.code, 0, selected.stderr)
      const selection = JSON.parse(selected.stdout)
      const planned = await ws.warrant(['plan', selection.selection_id, '--action', 'pause_collection', '--param', `reason=${REASON}`, '--json'])
      assert.equal(planned.code, 0, planned.stderr)
      const plan = JSON.parse(planned.stdout)
      const approved = await ws.warrant(['approve', plan.plan_id, '--digest', plan.plan_digest, '--token', reviewerToken])
      assert.equal(approved.code, 0, approved.stderr)
      return plan
    }

    test('commit --wait executes and prints every outcome; the same key names the same operation', async () => {
      const plan = await approvedPlan('eu')
      const committed = await ws.warrant(['commit', plan.plan_id, '--key', 'cli-k1', '--digest', plan.plan_digest, '--wait'])
      assert.equal(committed.code, 0, committed.stderr + committed.stdout)
      assert.match(committed.stdout, /^committed: operation op_\S+, \d+ target\(s\)/)
      assert.match(committed.stdout, /state: succeeded/)
      assert.match(committed.stdout, new RegExp(`succeeded ${plan.target_count}, failed 0, skipped 0, unknown 0, pending 0`))
      const operationId = /operation (op_\S+?),/.exec(committed.stdout)![1]!

      const again = await ws.warrant(['commit', plan.plan_id, '--key', 'cli-k1', '--digest', plan.plan_digest])
      assert.equal(again.code, 0, again.stderr)
      assert.match(again.stdout, new RegExp(`already names operation ${operationId}`))
      const otherBody = await ws.warrant(['commit', plan.plan_id, '--key', 'cli-k1', '--digest', plan.selection_digest])
      assert.equal(otherBody.code, 2)
      assert.match(otherBody.stderr, /idempotency_key_reused/)

      const show = await ws.warrant(['operation', 'show', operationId, '--json'])
      assert.equal(show.code, 0, show.stderr)
      const view = JSON.parse(show.stdout)
      assert.equal(view.state, 'succeeded')
      assert.equal(view.counts.succeeded, plan.target_count)
      const results = await ws.warrant(['operation', 'results', operationId, '--outcome', 'succeeded', '--all', '--json', '--limit', '50'])
      assert.equal(results.code, 0, results.stderr)
      const lines = results.stdout.trim().split('\n').map((l) => JSON.parse(l))
      assert.equal(lines.length, plan.target_count)
      assert.deepEqual(lines[0].after, { collection: 'paused', pause_reason: REASON })
      const bad = await ws.warrant(['operation', 'results', operationId, '--outcome', 'done'])
      assert.equal(bad.code, 2)
    })

    test('commit without --wait records the operation for a running gateway; commit --wait with the same key executes it', async () => {
      const plan = await approvedPlan('us')
      const noDigest = await ws.warrant(['commit', plan.plan_id, '--key', 'cli-k2'])
      assert.equal(noDigest.code, 2)
      assert.match(noDigest.stderr, /invalid_request: a commit needs --digest/)
      const queued = await ws.warrant(['commit', plan.plan_id, '--key', 'cli-k2', '--digest', plan.plan_digest])
      assert.equal(queued.code, 0, queued.stderr)
      assert.match(queued.stdout, /it runs in `warrant serve`/)
      assert.match(queued.stdout, /^committed: operation/, 'the refused commit without --digest left the plan committable')
      const operationId = /operation (op_\S+?),/.exec(queued.stdout)![1]!
      const pending = await ws.warrant(['operation', 'show', operationId])
      assert.match(pending.stdout, /state: pending \(not finished\)/)
      const waited = await ws.warrant(['commit', plan.plan_id, '--key', 'cli-k2', '--digest', plan.plan_digest, '--wait'])
      assert.equal(waited.code, 0, waited.stderr + waited.stdout)
      assert.match(waited.stdout, /state: succeeded/)
    })

    test('an unapproved plan is refused with exit 3', async () => {
      const selected = JSON.parse((await ws.warrant(['select', 'subscriptions', '-f', 'status=past_due', '-f', 'region=apac', '--json'])).stdout)
      const plan = JSON.parse((await ws.warrant(['plan', selected.selection_id, '--action', 'resume_collection', '--json'])).stdout)
      const refused = await ws.warrant(['commit', plan.plan_id, '--key', 'cli-k3', '--digest', plan.plan_digest, '--wait'])
      assert.equal(refused.code, 3)
      assert.match(refused.stderr, /not_approved/)
    })
  })
}
