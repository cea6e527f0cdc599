import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { STORE_KINDS } from '../support/stores.js'
import { allResults, selectProposeApprove, waitForOperation } from './support/flow.js'
import { withUsersGateway } from './support/users-gateway.js'

/**
 * The upstream applies each PATCH, answers 200 with a Content-Length, and resets the connection after 8 bytes of
 * the body. The target is `unknown` (the answer cannot be read), and what a reviewer reads says the upstream
 * answered 200 and the write reached it: it said "could not be reached (ECONNRESET)" with no status, which reads
 * as nothing sent.
 */
for (const kind of STORE_KINDS) {
  describe(`a write answered 200 whose body is then cut (${kind} store)`, () => {
    test('is unknown with upstream_status 200, the reason naming the answer and the cut', () =>
      withUsersGateway(kind, 2, { concurrency: 1, batch_size: 10 }, async ({ upstream, agent, reviewer }) => {
        upstream.onWrite = () => ({ cutAfter: 8 })
        const action = { type: 'set_role', role: 'viewer' }
        const { selection } = await selectProposeApprove(agent, [reviewer], 'users', { filter: { status: 'active' } }, action)
        const commit = await agent('POST', '/v1/resources/users/bulk-actions', { selection_id: selection.selection_id, expected_digest: selection.digest, action }, { 'idempotency-key': `cut-${kind}` })
        assert.equal(commit.status, 202, JSON.stringify(commit.body))
        await waitForOperation(agent, commit.body.operation_id)
        const written = (await allResults(agent, commit.body.operation_id)).filter((r) => r.outcome !== 'pending')
        assert.ok(written.length > 0, 'a target was written')
        for (const result of written) {
          assert.deepEqual([result.outcome, result.reason, result.upstream_status], ['unknown', 'upstream_unknown', 200], JSON.stringify(result))
          assert.match(result.error, /^source "\w+" answered 200, then its body was cut after 8 bytes of the \d+ its Content-Length declared \(ECONNRESET\); the write reached the upstream and may have been applied/)
          assert.doesNotMatch(result.error, /could not be reached/)
        }
      }))
  })
}
