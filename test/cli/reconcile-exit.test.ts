import assert from 'node:assert/strict'
import { join } from 'node:path'
import { after, before, describe, test } from 'node:test'
import Database from 'better-sqlite3'
import { createCliWorkspace } from '../support/cli-config.js'

/**
 * README, exit statuses: 3 is "an operation that finished without every target succeeding", 0 only for one whose
 * every target succeeded. `warrant operation show` says so; `warrant reconcile`, which prints the same operation
 * after re-reading its unknown targets, exited 0 with targets still unknown: `warrant reconcile OP && …` read
 * it as whole.
 */
describe('warrant reconcile: exit status of the operation it leaves (sqlite)', () => {
  let ws: Awaited<ReturnType<typeof createCliWorkspace>>
  before(async () => {
    ws = await createCliWorkspace({ count: 300 })
  })
  after(async () => {
    await ws?.drop()
  })

  test('a target still unknown after reconciling: exit 3, as operation show', async () => {
    const reviewer = JSON.parse((await ws.warrant(['token', 'create', '--role', 'reviewer', '--name', 'alice', '--json'])).stdout).token as string
    const selection = JSON.parse((await ws.warrant(['select', 'subscriptions', '-f', 'status=past_due', '-f', 'region=eu', '-f', 'collection=active', '--json', '-q'])).stdout)
    const plan = JSON.parse((await ws.warrant(['plan', selection.selection_id, '--action', 'pause_collection', '--param', 'reason=rec', '--json'])).stdout)
    if (plan.approval_state?.still_needed !== 0) assert.equal((await ws.warrant(['approve', plan.plan_id, '--digest', plan.plan_digest, '--token', reviewer])).code, 0)
    const committed = await ws.warrant(['commit', plan.plan_id, '--key', 'rec-1', '--digest', plan.plan_digest, '--wait', '--json', '-q'])
    assert.equal(committed.code, 0, committed.stderr)
    const operationId = JSON.parse(committed.stdout).operation_id as string

    // As after a lost answer: the first target unknown, its record back at the frozen version (the write may
    // still land, inside the settle window), the operation finished with an unknown.
    const store = new Database(join(ws.dir, 'warrant.db'))
    const target = store.prepare('select record_id, expected_version from operation_targets where operation_id = ? and ord = 1').get(operationId) as { record_id: string; expected_version: string }
    store.prepare("update operation_targets set state = 'unknown', unknown_since = ? where operation_id = ? and ord = 1").run(new Date().toISOString(), operationId)
    store.prepare("update operations set state = 'completed_with_unknown' where id = ?").run(operationId)
    store.close()
    const demo = new Database(join(ws.dir, 'demo.db'))
    demo.prepare("update subscriptions set collection = 'active', pause_reason = '', version = ? where id = ?").run(Number(target.expected_version), target.record_id)
    demo.close()

    const r = await ws.warrant(['reconcile', operationId])
    assert.match(r.stdout, /1 still unknown/)
    assert.equal(r.code, 3, `reconcile exits ${r.code} with a target still unknown\n${r.stdout}${r.stderr}`)
    const show = await ws.warrant(['operation', 'show', operationId])
    assert.equal(show.code, 3)
  })
})
