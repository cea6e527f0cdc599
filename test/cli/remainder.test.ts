import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { runWarrant } from '../support/cli-config.js'
import { selectProposeApprove, waitForOperation } from '../operations/support/flow.js'
import { withUsersGateway } from '../operations/support/users-gateway.js'

/** `warrant remainder <operation_id>`: POST /v1/operations/{id}/remainder from a terminal (a real subprocess; watched fail first: unknown command). */
describe('warrant remainder', () => {
  test('proposes the rest of a halted operation, the same plan asked again; an operation with nothing pending is refused', () =>
    withUsersGateway('sqlite', 12, { concurrency: 1, batch_size: 10 }, async ({ fx, upstream, agent, reviewer, configFile }) => {
      upstream.onWrite = (_id, n) => (n === 3 ? { refuse: { status: 401, body: { error: 'no' } } } : undefined)
      const action = { type: 'set_role', role: 'viewer' }
      const run = async (key: string) => {
        const { selection } = await selectProposeApprove(agent, [reviewer], 'users', { filter: { status: 'active' } }, action)
        const commit = await agent('POST', '/v1/resources/users/bulk-actions', { selection_id: selection.selection_id, expected_digest: selection.digest, action }, { 'idempotency-key': key })
        return waitForOperation(agent, commit.body.operation_id)
      }
      const halted = await run('cli-halt')
      assert.equal(halted.state, 'halted')
      const token = (await fx.gateway.principals.issue({ name: 'cli-users', role: 'agent', scopes: { resources: ['users'], actions: ['set_role'] } })).token
      const warrant = (args: string[]) => runWarrant([...args, '--config', configFile, '--token', token], fx.dir)

      const proposed = await warrant(['remainder', halted.operation_id])
      assert.equal(proposed.code, 0, proposed.stderr)
      assert.match(proposed.stdout, new RegExp(`^PLAN plan_\\S+ \\(pending\\): set_role on ${halted.counts.pending} record`))
      const json = JSON.parse((await warrant(['remainder', halted.operation_id, '--json'])).stdout)
      assert.equal(json.created, false)
      assert.equal(json.target_count, halted.counts.pending)
      assert.match(proposed.stdout, new RegExp(json.plan_id))
      // the operation names it: a reader of `operation show` sees the rest is proposed, and where
      const shown = await warrant(['operation', 'show', halted.operation_id])
      assert.match(shown.stdout, new RegExp(`^  the rest: plan ${json.plan_id} \\(pending\\)`, 'm'), shown.stdout)
      assert.equal(JSON.parse((await warrant(['operation', 'show', halted.operation_id, '--json'])).stdout).follow_ups.remainder.plan_id, json.plan_id)

      upstream.onWrite = () => undefined
      const done = await run('cli-all')
      const nothing = await warrant(['remainder', done.operation_id])
      assert.notEqual(nothing.code, 0)
      assert.match(nothing.stderr, /conflict/)
      assert.match(nothing.stderr, /nothing left/)
    }))
})
