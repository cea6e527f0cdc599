import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { runWarrant } from '../support/cli-config.js'
import { STORE_KINDS } from '../support/stores.js'
import { allResults, selectProposeApprove, waitForOperation } from '../operations/support/flow.js'
import { userIdOf } from '../operations/support/users-upstream.js'
import { withUsersGateway } from '../operations/support/users-gateway.js'

/**
 * "Which records changed?" (`warrant audit query --operation OP`) listed only the writes whose call was answered
 * `written`. A write the upstream took with 202 Accepted has the call outcome `unknown` whatever became of it: the
 * record it changed (here reconciled `succeeded`, the effect on the upstream) was left out, and the answer read
 * "records changed (0)". Writes without an answer are listed beside the written ones, as writes that may have changed
 * their record.
 */
for (const kind of STORE_KINDS) {
  describe(`warrant audit query --operation: writes without an answer (${kind} store, real CLI process)`, () => {
    test('a write accepted with 202 and applied is never left out of the records that changed', () =>
      withUsersGateway(kind, 2, { concurrency: 1, batch_size: 10 }, async ({ fx, upstream, agent, reviewer, configFile }) => {
        let release = () => {}
        const queue = new Promise<void>((resolve) => (release = resolve))
        upstream.onWrite = () => ({ accept: queue })
        const { selection } = await selectProposeApprove(agent, [reviewer], 'users', { filter: { status: 'active' } }, { type: 'set_role', role: 'viewer' })
        const commit = await agent('POST', '/v1/resources/users/bulk-actions', { selection_id: selection.selection_id, expected_digest: selection.digest, action: { type: 'set_role', role: 'viewer' } }, { 'idempotency-key': `records-changed-${kind}` })
        assert.equal(commit.status, 202, JSON.stringify(commit.body))
        const id = commit.body.operation_id as string
        assert.equal((await waitForOperation(agent, id)).state, 'halted')
        release()
        const deadline = Date.now() + 5000
        while (upstream.users.get(userIdOf(1))!.version !== 2) {
          if (Date.now() > deadline) assert.fail('the accepted write was never applied')
          await new Promise((r) => setTimeout(r, 10))
        }
        await fx.gateway.audit.flush()
        const settled = await agent('POST', `/v1/operations/${id}/reconcile`)
        assert.equal(settled.body.succeeded, 1, JSON.stringify(settled.body))
        assert.deepEqual((await allResults(agent, id, 'succeeded')).map((r) => r.id), [userIdOf(1)])

        const json = await runWarrant(['audit', 'query', '--operation', id, '--json', '--config', configFile], fx.dir)
        assert.equal(json.code, 0, json.stderr)
        const answer = JSON.parse(json.stdout) as { records_changed: { target_id: string }[]; writes_without_answer: { target_id: string; outcome: string }[] }
        assert.deepEqual(answer.records_changed, [])
        assert.deepEqual(answer.writes_without_answer.map((r) => [r.target_id, r.outcome]), [[userIdOf(1), 'unknown']])

        const text = await runWarrant(['audit', 'query', '--operation', id, '--config', configFile], fx.dir)
        assert.equal(text.code, 0, text.stderr)
        assert.match(text.stdout, /records changed \(0\)/)
        assert.match(text.stdout, new RegExp(`writes without an answer, which may have changed their record \\(1\\):\\n  ${userIdOf(1)}  PATCH `))
      }))
  })
}
