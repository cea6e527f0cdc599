import assert from 'node:assert/strict'
import { join } from 'node:path'
import { after, before, describe, test } from 'node:test'
import Database from 'better-sqlite3'
import { createCliWorkspace } from '../support/cli-config.js'

/**
 * README, exit statuses: 0 is "done, and the answer is whole: … an operation whose every target succeeded";
 * 3 is "an operation that finished without every target succeeding". `warrant operation show` of an operation
 * that finished with a skipped target exited 0, so a script `warrant operation show OP && …` read it as whole.
 */
describe('warrant operation show: exit status of an operation that did not fully succeed (sqlite)', () => {
  let ws: Awaited<ReturnType<typeof createCliWorkspace>>
  let reviewerToken = ''
  before(async () => {
    ws = await createCliWorkspace({ count: 300 })
    const issued = await ws.warrant(['token', 'create', '--role', 'reviewer', '--name', 'alice', '--json'])
    assert.equal(issued.code, 0, issued.stderr)
    reviewerToken = JSON.parse(issued.stdout).token
  })
  after(async () => {
    await ws?.drop()
  })

  test('commit --wait and operation show (plain and --json) both exit 3 for completed_with_skips', async () => {
    const selected = await ws.warrant(['select', 'subscriptions', '-f', 'status=past_due', '-f', 'region=eu', '-f', 'collection=active', '--json'])
    assert.equal(selected.code, 0, selected.stderr)
    const selection = JSON.parse(selected.stdout)
    assert.ok(selection.count >= 2, `count ${selection.count}`)
    const planned = await ws.warrant(['plan', selection.selection_id, '--action', 'pause_collection', '--param', 'reason=probe', '--json'])
    assert.equal(planned.code, 0, planned.stderr)
    const plan = JSON.parse(planned.stdout)
    if (plan.approval_state?.still_needed !== 0) {
      const approved = await ws.warrant(['approve', plan.plan_id, '--digest', plan.plan_digest, '--token', reviewerToken])
      assert.equal(approved.code, 0, approved.stderr + approved.stdout)
    }
    // one member changes upstream after review: its target is skipped
    const db = new Database(join(ws.dir, 'demo.db'))
    db.prepare("update subscriptions set status = 'active', version = version + 1 where id = ?").run(selection.records[0].id)
    db.close()
    const committed = await ws.warrant(['commit', plan.plan_id, '--key', 'probe-k1', '--digest', plan.plan_digest, '--wait'])
    assert.equal(committed.code, 3, committed.stderr + committed.stdout)
    const operationId = /operation (op_\S+?),/.exec(committed.stdout)![1]!
    const show = await ws.warrant(['operation', 'show', operationId])
    assert.match(show.stdout, /state: completed_with_skips/)
    assert.equal(show.code, 3, `operation show exits ${show.code} for an operation that finished with a skipped target (README: 3)`)
    const json = await ws.warrant(['operation', 'show', operationId, '--json'])
    assert.equal([JSON.parse(json.stdout).state, json.code].join(' '), 'completed_with_skips 3')
  })
})
