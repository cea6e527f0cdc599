import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { waitForOperation } from '../operations/support/flow.js'
import { itemsMcpWorld } from '../operations/support/items-world.js'
import { assertAnswered, callTool, text } from './support.js'

const OFFER = /propose_compensation proposes undoing the succeeded ones/

/**
 * get_operation's summary ended every finished operation with "propose_compensation proposes undoing the succeeded
 * ones", though a compensation of a `DELETE`, of an action endpoint whose body carries no set field, or of an action
 * declared irreversible is refused (409): an agent told to undo called it and met the refusal. The hint now follows
 * `restorabilityOf`, saying in the refusal's words why no compensation can be proposed; the offer stays where one
 * can. Official MCP client over /mcp, a loopback upstream whose writes are action endpoints.
 */
describe('get_operation offers a compensation only where one can be proposed', () => {
  const t = itemsMcpWorld('compensation-hint', 12)
  const ran = (action: string, ids: readonly string[]) => t.ran(action, ids, `hint-${action}`)

  const summaryOf = async (operationId: string) => {
    const result = await callTool(t.client, 'get_operation', { operation_id: operationId })
    assertAnswered(result)
    return text(result)
  }

  for (const [action, ids, words] of [
    ['remove', ['i1', 'i2'], /action "remove" cannot be compensated: its write is DELETE \/items\/\{id\}, and a compensation would send that DELETE again, which restores no removed record/],
    ['close', ['i3', 'i4'], /action "close" cannot be compensated: its write is POST \/items\/\{id\}\/close, whose body carries no set field/],
    ['close_for_good', ['i5', 'i6'], /action "close_for_good" is declared irreversible; there is no compensation to propose/],
  ] as const)
    test(`${action}: no offer to compensate; the summary says why, as propose_compensation's refusal does`, async () => {
      const operationId = await ran(action, ids)
      const summary = await summaryOf(operationId)
      assert.match(summary, /^FINISHED \(succeeded\)/, summary)
      assert.doesNotMatch(summary, OFFER, summary)
      assert.match(summary, words, summary)
      assert.match(summary, /No compensation can be proposed: /, summary)
      const refused = await callTool(t.client, 'propose_compensation', { operation_id: operationId })
      assert.ok(refused.isError)
      assert.match(text(refused), words, 'the same words as the refusal')
    })

  test('set_closed (its body carries the set field): the offer stays, and is true; so on its compensation', async () => {
    const operationId = await ran('set_closed', ['i7', 'i8'])
    const summary = await summaryOf(operationId)
    assert.match(summary, OFFER, summary)
    assert.doesNotMatch(summary, /cannot be compensated|No compensation can be proposed/, summary)
    const undo = await callTool(t.client, 'propose_compensation', { operation_id: operationId })
    const plan = assertAnswered(undo)
    assert.equal((await t.world.fx.as('reviewer')('POST', `/v1/plans/${plan.plan_id}/approvals`, { decision: 'approve', expected_plan_digest: plan.plan_digest })).status, 201)
    const commit = await t.agent('POST', `/v1/plans/${plan.plan_id}/commit`, { expected_digest: plan.plan_digest }, { 'idempotency-key': 'hint-undo' })
    assert.equal(commit.status, 202, JSON.stringify(commit.body))
    assert.equal((await waitForOperation(t.agent, commit.body.operation_id)).state, 'succeeded')
    const undone = await summaryOf(commit.body.operation_id)
    assert.match(undone, OFFER, undone)
  })
})
