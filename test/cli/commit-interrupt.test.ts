import assert from 'node:assert/strict'
import { join } from 'node:path'
import { after, before, describe, test } from 'node:test'
import Database from 'better-sqlite3'
import { createCliWorkspace } from '../support/cli-config.js'
import { interruptCliWhen } from '../support/cli-interrupt.js'

/**
 * `warrant commit --wait` executes the operation in the CLI's own process. Ctrl-C there killed it mid-window:
 * targets left `in_flight` (unknown to the next process, never retried blindly) and the lease held until it
 * expired, where `warrant serve` stopped on the same signal with nothing in flight. A Ctrl-C must stop as serve
 * does: every target sent is answered and recorded, the rest stay pending, the lease is released, and the
 * exit status says the operation has not finished (5).
 */
describe('Ctrl-C during warrant commit --wait (sqlite)', () => {
  let ws: Awaited<ReturnType<typeof createCliWorkspace>>
  before(async () => {
    // slow writes, so the interrupt lands mid-operation
    ws = await createCliWorkspace({ count: 3000, edit: (raw) => (raw.execution = { concurrency: 2, max_writes_per_second: 20 }) })
  })
  after(async () => {
    await ws?.drop()
  })

  test('stops cleanly: nothing in flight or unknown, lease released, exit 5 with the operation shown', { timeout: 120_000 }, async () => {
    const reviewer = JSON.parse((await ws.warrant(['token', 'create', '--role', 'reviewer', '--name', 'alice', '--json'])).stdout).token as string
    const selection = JSON.parse((await ws.warrant(['select', 'subscriptions', '-f', 'status=past_due', '-f', 'collection=active', '--json', '-q'])).stdout)
    assert.ok(selection.count > 100, `count ${selection.count}`)
    const plan = JSON.parse((await ws.warrant(['plan', selection.selection_id, '--action', 'pause_collection', '--param', 'reason=interrupt', '--json'])).stdout)
    const approved = await ws.warrant(['approve', plan.plan_id, '--digest', plan.plan_digest, '--token', reviewer])
    assert.equal(approved.code, 0, approved.stderr)

    const { code, stdout, stderr } = await interruptCliWhen(ws.dir, ['commit', plan.plan_id, '--key', 'k-int', '--digest', plan.plan_digest, '--wait', '--config', ws.configPath], /succeeded [1-9]/)
    assert.equal(code, 5, `exit ${code}\n${stdout}\n${stderr}`)
    assert.match(stdout, /state: running \(not finished\)|state: pending \(not finished\)/)
    assert.match(stderr, /interrupted/)

    const db = new Database(join(ws.dir, 'warrant.db'), { readonly: true })
    const states = Object.fromEntries(
      (db.prepare('select state, count(*) as n from operation_targets group by state').all() as { state: string; n: number }[]).map((r) => [r.state, r.n]),
    )
    const op = db.prepare('select lease_owner from operations').get() as { lease_owner: string | null }
    db.close()
    assert.equal(states.in_flight ?? 0, 0, `targets left in flight: ${JSON.stringify(states)}`)
    assert.equal(states.unknown ?? 0, 0, JSON.stringify(states))
    assert.ok((states.pending ?? 0) > 0, `the interrupt came mid-operation: ${JSON.stringify(states)}`)
    assert.equal(op.lease_owner, null, 'the interrupted process released its lease')
  })
})
