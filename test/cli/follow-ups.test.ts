import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { createCliWorkspace } from '../support/cli-config.js'

describe('the whole flow from the CLI: recover, compensate, reconcile (real subprocesses)', () => {
  let ws: Awaited<ReturnType<typeof createCliWorkspace>>
  let reviewer = ''
  before(async () => {
    ws = await createCliWorkspace({ count: 1200 })
    const issue = async (name: string) => JSON.parse((await ws.warrant(['token', 'create', '--role', 'reviewer', '--name', name, '--json'])).stdout).token as string
    reviewer = await issue('rita')
  })
  after(async () => {
    await ws?.drop()
  })

  test('recover turns an incomplete selection into a complete one of the records it returned, which can be planned and approved', async () => {
    const partial = JSON.parse((await ws.warrant(['select', 'subscriptions', '-f', 'status=past_due', '--max-pages', '1', '--page-size', '40', '--json', '-q'])).stdout)
    assert.equal(partial.complete, false)
    const recovered = await ws.warrant(['recover', partial.selection_id])
    assert.equal(recovered.code, 0, recovered.stderr)
    assert.match(recovered.stdout, /^COMPLETE: selection sel_\S+ froze 40 record\(s\)/)
    assert.match(recovered.stdout, new RegExp(`Recovers selection ${partial.selection_id}`))
    const created = /^COMPLETE: selection (sel_\S+) froze/.exec(recovered.stdout)![1]!
    // Asked again, the same principal is handed the recovery it already made: nothing is read, and the output says
    // so (it printed "reading the first page" and the same lines as a new recovery, as if a walk had happened).
    const again = await ws.warrant(['recover', partial.selection_id])
    assert.equal(again.code, 0, again.stderr)
    assert.doesNotMatch(again.stderr, /reading the first page|page\(s\) read/, 'no walk happened, so no progress of one')
    assert.match(again.stdout, new RegExp(`^COMPLETE: selection ${created} froze 40 record\\(s\\)`))
    assert.match(again.stdout, new RegExp(`already recovered: selection ${created}, made earlier by this principal, is returned; nothing was read again`))
    assert.doesNotMatch(recovered.stdout, /already recovered/, 'a new recovery does not say so')
    const json = JSON.parse((await ws.warrant(['recover', partial.selection_id, '--json'])).stdout)
    assert.equal(json.selection_id, created)
    assert.equal(json.created, false)
    assert.equal(json.recovery_of, partial.selection_id)
    assert.equal(json.complete, true)
    const missing = await ws.warrant(['recover', 'sel_nope'])
    assert.equal(missing.code, 2)
    assert.match(missing.stderr, /not_found/)
  })

  test('compensate proposes the restoring plan of a finished operation; reconcile (both spellings) re-reads unknown targets', async () => {
    const selection = JSON.parse((await ws.warrant(['select', 'subscriptions', '-f', 'status=past_due', '-f', 'region=eu', '-f', 'collection=active', '--json', '-q'])).stdout)
    const plan = JSON.parse((await ws.warrant(['plan', selection.selection_id, '--action', 'pause_collection', '--param', 'reason=x', '--json'])).stdout)
    assert.equal((await ws.warrant(['approve', plan.plan_id, '--digest', plan.plan_digest, '--token', reviewer])).code, 0)
    const committed = await ws.warrant(['commit', plan.plan_id, '--digest', plan.plan_digest, '--key', 'follow-1', '--wait', '-q'])
    assert.equal(committed.code, 0, committed.stderr)
    const operationId = /operation (op_\S+?),/.exec(committed.stdout)![1]!

    const compensation = await ws.warrant(['compensate', operationId])
    assert.equal(compensation.code, 0, compensation.stderr)
    assert.match(compensation.stdout, new RegExp(`^PLAN plan_\\S+ \\(pending\\): compensate on ${plan.target_count} record`))
    // the compensation's parameters are Warrant's, drawn from the operation (they were labelled the agent's words), and
    // its precondition is per target (it printed `{}`, beside a count of members that fail it)
    assert.match(compensation.stdout, /^ {2}parameters: {3}set by Warrant from the operation: .*operation_id = "op_/m)
    assert.doesNotMatch(compensation.stdout, /the agent's words/)
    assert.match(compensation.stdout, /^ {2}precondition: each record still holds what the operation wrote \(judged per target\)/m)
    const again = JSON.parse((await ws.warrant(['compensate', operationId, '--json'])).stdout)
    assert.equal(again.compensates, operationId)
    const byOther = await ws.warrant(['approve', again.plan_id, '--digest', again.plan_digest, '--token', reviewer])
    assert.equal(byOther.code, 0, byOther.stderr)

    for (const args of [['reconcile', operationId], ['operation', 'reconcile', operationId]]) {
      const reconciled = await ws.warrant(args)
      assert.equal(reconciled.code, 0, reconciled.stderr)
      assert.match(reconciled.stdout, /^reconciled 0 unknown target\(s\): 0 succeeded, 0 failed, 0 still unknown/)
    }
    const unknownOp = await ws.warrant(['reconcile', 'op_nope'])
    assert.equal(unknownOp.code, 2)
  })
})
