import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { type CliWorkspace, createCliWorkspace } from '../support/cli-config.js'

/**
 * A `warrant` command's audit row named the ids written in its arguments, never the one it answered: `warrant plan`
 * made a plan whose id no row held (`warrant audit query --plan PLAN` printed "no audit events match", exit 0, for
 * the plan just proposed) and `warrant select` a selection whose row had none, so "who asked" of an operation on it
 * could not reach who froze it. The row also names the selection or plan the command made.
 */
describe('warrant select / plan: the audit row names the selection or plan made (real process, sqlite)', () => {
  let ws: CliWorkspace
  before(async () => {
    ws = await createCliWorkspace({ count: 50 })
  })
  after(async () => {
    await ws?.drop()
  })

  test('select then plan: each is found by its id', { timeout: 120_000 }, async () => {
    const selected = await ws.warrant(['select', 'subscriptions', '-q', '-f', 'status=past_due', '--json'])
    assert.equal(selected.code, 0, selected.stderr)
    const selectionId = JSON.parse(selected.stdout).selection_id as string
    const planned = await ws.warrant(['plan', selectionId, '-a', 'pause_collection', '-p', 'reason=audit', '--json'])
    assert.equal(planned.code, 0, planned.stderr)
    const planId = JSON.parse(planned.stdout).plan_id as string

    const rows = await ws.withStore((store) => store.db.selectFrom('audit_events').selectAll().where('surface', '=', 'cli').orderBy('seq').execute())
    const selectRow = rows.find((r) => r.action === 'cli:select')!
    assert.equal(selectRow.selection_id, selectionId, 'the select row names the selection it froze')
    const planRow = rows.find((r) => r.action === 'cli:plan')!
    assert.equal(planRow.plan_id, planId, 'the plan row names the plan it made')
    assert.equal(planRow.selection_id, selectionId)

    const query = await ws.warrant(['audit', 'query', '--plan', planId, '--json'])
    assert.equal(query.code, 0, query.stderr)
    assert.ok(JSON.parse(query.stdout).events.some((e: { action: string }) => e.action === 'cli:plan'), query.stdout)
  })

  test('commit: the row names the operation it recorded', { timeout: 120_000 }, async () => {
    const issued = await ws.warrant(['token', 'create', '--role', 'reviewer', '--name', 'alice', '--json'])
    assert.equal(issued.code, 0, issued.stderr)
    const selected = await ws.warrant(['select', 'subscriptions', '-q', '-f', 'status=past_due', '-f', 'region=eu', '--json'])
    const selection = JSON.parse(selected.stdout)
    const plan = JSON.parse((await ws.warrant(['plan', selection.selection_id, '-a', 'pause_collection', '-p', 'reason=audit', '--json'])).stdout)
    if (plan.approval_state?.still_needed !== 0) {
      const approved = await ws.warrant(['approve', plan.plan_id, '--digest', plan.plan_digest, '--token', JSON.parse(issued.stdout).token])
      assert.equal(approved.code, 0, approved.stderr + approved.stdout)
    }
    const committed = await ws.warrant(['commit', plan.plan_id, '--key', 'answer-ids', '--digest', plan.plan_digest, '--json'])
    assert.equal(committed.code, 0, committed.stderr)
    const operationId = JSON.parse(committed.stdout).operation_id as string
    const rows = await ws.withStore((store) => store.db.selectFrom('audit_events').selectAll().where('action', '=', 'cli:commit').execute())
    assert.equal(rows.length, 1)
    assert.equal(rows[0]!.operation_id, operationId, 'the commit row names the operation')
    assert.equal(rows[0]!.plan_id, plan.plan_id)
  })
})
