import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { assertRefused, callTool, text } from '../mcp/support.js'
import { runWarrant } from '../support/cli-config.js'
import { waitForOperation } from './support/flow.js'
import { itemsMcpWorld } from './support/items-world.js'

/**
 * A compensation writes through the action's own request with each record's before-values. Before: for a
 * `DELETE /items/{id}` action (reversible by the config's default) it was proposed (201, "reversible": true),
 * approved and committed, and sent `DELETE /items/i1…` again: every target failed effect_contradicted and the
 * operation halted. An action endpoint whose body carries no set field (`POST /items/{id}/close`) did the same. Now
 * both are refused before anything is created, on every surface, with a reason code; an endpoint whose body carries
 * the set fields is still proposed, its plan saying it restores only if the endpoint sets what its body says.
 */
describe('compensation of an action whose write cannot restore', () => {
  const t = itemsMcpWorld('not-restorable', 11)
  const ran = (action: string, ids: readonly string[]) => t.ran(action, ids, `run-${action}`)

  const counts = async () => {
    const db = t.world.fx.gateway.store.db
    return [(await db.selectFrom('plans').select('id').execute()).length, (await db.selectFrom('selections').select('id').execute()).length]
  }

  for (const [action, ids, reason, words] of [
    ['remove', ['i1', 'i2', 'i3'], 'delete_not_restorable', /its write is DELETE \/items\/\{id\}, and a compensation would send that DELETE again/],
    ['close', ['i4', 'i5', 'i6'], 'body_sets_no_field', /its write is POST \/items\/\{id\}\/close, whose body carries no set field/],
    ['close_for_good', ['i10', 'i11'], 'declared_irreversible', /action "close_for_good" is declared irreversible; there is no compensation to propose/],
  ] as const)
    test(`${action}: refused over HTTP (409 ${reason}), MCP (isError) and the CLI (exit 3); nothing created, nothing sent`, async () => {
      const operationId = await ran(action, ids)
      const before = await counts()
      const sent = t.up.seen.length
      const http = await t.agent('POST', `/v1/operations/${operationId}/compensation`)
      assert.equal(http.status, 409, JSON.stringify(http.body))
      assert.equal(http.body.error.code, 'conflict')
      assert.equal(http.body.error.details.reason, reason)
      assert.match(http.body.error.message, words)
      const mcp = await callTool(t.client, 'propose_compensation', { operation_id: operationId })
      assertRefused(mcp, 'conflict')
      assert.equal(mcp.structuredContent.error.details.reason, reason)
      assert.match(text(mcp), words)
      const cli = await runWarrant(['compensate', operationId, '--config', t.world.configPath, '--token', t.token], t.world.fx.dir)
      assert.equal(cli.code, 3, cli.stdout + cli.stderr)
      assert.match(cli.stderr, words)
      assert.deepEqual(await counts(), before, 'no selection, no plan')
      assert.deepEqual(t.up.seen.slice(sent).filter((s) => s.method !== 'GET'), [], 'no write sent')
    })

  test('an endpoint whose body carries the set field: proposed, its plan saying the condition; it restores', async () => {
    const operationId = await ran('set_closed', ['i7', 'i8', 'i9'])
    const compensation = await t.agent('POST', `/v1/operations/${operationId}/compensation`)
    assert.equal(compensation.status, 201, JSON.stringify(compensation.body))
    assert.match(compensation.body.action.description, /restored only if POST \/items\/\{id\}\/set sets what its body says/)
    const undo = compensation.body
    assert.equal((await t.world.fx.as('reviewer')('POST', `/v1/plans/${undo.plan_id}/approvals`, { decision: 'approve', expected_plan_digest: undo.plan_digest })).status, 201)
    const commit = await t.agent('POST', `/v1/plans/${undo.plan_id}/commit`, { expected_digest: undo.plan_digest }, { 'idempotency-key': 'undo-set' })
    assert.equal(commit.status, 202, JSON.stringify(commit.body))
    const done = await waitForOperation(t.agent, commit.body.operation_id)
    assert.equal(done.state, 'succeeded', JSON.stringify(done))
    for (const id of ['i7', 'i8', 'i9']) assert.equal(t.up.items.get(id)!.status, 'open')
  })
})
