import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { recordVersionProof } from '../../src/operations/index.js'
import { STORE_KINDS } from '../support/stores.js'
import { allResults, selectProposeApprove, waitForOperation } from './support/flow.js'
import { usersProof, withUsersGateway, type UsersGateway } from './support/users-gateway.js'
import { userIdOf } from './support/users-upstream.js'

const COUNT = 4
const ROLE = { type: 'set_role', role: 'viewer' }

async function commitRole(ctx: UsersGateway, key: string): Promise<{ operation: any; results: any[] }> {
  const { selection } = await selectProposeApprove(ctx.agent, [ctx.reviewer], 'users', { filter: { status: 'active' } }, ROLE)
  assert.equal(selection.count, COUNT)
  const commit = await ctx.agent('POST', '/v1/resources/users/bulk-actions', { selection_id: selection.selection_id, expected_digest: selection.digest, action: ROLE }, { 'idempotency-key': key })
  assert.equal(commit.status, 202, JSON.stringify(commit.body))
  const operation = await waitForOperation(ctx.agent, commit.body.operation_id)
  return { operation, results: await allResults(ctx.agent, commit.body.operation_id) }
}

/**
 * A write whose connection was refused provably never left the gateway, yet it was recorded `unknown`
 * (`upstream_unknown`, "the write may or may not have happened"), so a person had to reconcile a record nothing
 * was sent to. The node client sees a new connection never connect: the target is `failed` (`not_sent`), the
 * record unchanged, and it counts toward the consecutive-error halt. A kept-alive connection that breaks on the
 * write may have carried it, and stays `unknown`.
 */
for (const kind of STORE_KINDS) {
  describe(`a write that was never sent (${kind} store)`, () => {
    test('the upstream reads the batch, then its port refuses connections: each write is failed not_sent, none unknown, and three in a row halt', () =>
      withUsersGateway(kind, COUNT, { concurrency: 1, batch_size: COUNT, halt_after_consecutive_errors: 3 }, async (ctx) => {
        // the write probe held: each target is read with its batch only, and its write follows at once
        await recordVersionProof(ctx.fx.gateway.store.db, usersProof(ctx))
        ctx.upstream.keepAlive = false
        let reads = 0
        ctx.upstream.onRead = () => {
          // the batch's last read: no connection opens on this port from now on
          if (++reads === COUNT) ctx.upstream.stopListening()
        }
        const { operation, results } = await commitRole(ctx, `never-sent-${kind}`)
        assert.equal(reads, COUNT, 'each target read once, with its batch')
        assert.equal(ctx.upstream.totalWrites(), 0)
        assert.equal(operation.state, 'halted', JSON.stringify(operation))
        assert.equal(operation.halt_reason?.rule, 'consecutive_errors', JSON.stringify(operation.halt_reason))
        assert.deepEqual(operation.counts, { pending: 1, in_flight: 0, succeeded: 0, failed: 3, skipped: 0, unknown: 0 })
        const failed = results.filter((r) => r.outcome === 'failed')
        for (const result of failed) {
          assert.deepEqual([result.reason, result.upstream_status, result.after], ['not_sent', null, null], JSON.stringify(result))
          assert.match(result.error, /^source "main" could not be reached \(ECONNREFUSED\); no connection was made, so the write was never sent$/)
        }
        for (const user of ctx.upstream.users.values()) assert.deepEqual([user.role, user.version], ['member', 1])
        const reconcile = await ctx.agent('POST', `/v1/operations/${operation.operation_id}/reconcile`)
        assert.equal(reconcile.status, 200, JSON.stringify(reconcile.body))
        assert.equal(reconcile.body.examined, 0, 'nothing to reconcile')
      }))

    test('a kept-alive connection reset once the write came over it may have carried the write: unknown, upstream_unknown', () =>
      withUsersGateway(kind, COUNT, { concurrency: 1, batch_size: COUNT }, async (ctx) => {
        ctx.upstream.onWrite = (_id, n) => (n === 1 ? { reset: true } : undefined)
        const { operation, results } = await commitRole(ctx, `reused-reset-${kind}`)
        assert.equal(ctx.upstream.reusedWrites(), COUNT, 'every PATCH came on a connection an earlier read had used')
        assert.deepEqual(operation.counts, { pending: 0, in_flight: 0, succeeded: COUNT - 1, failed: 0, skipped: 0, unknown: 1 }, JSON.stringify(operation))
        const reset = results.find((r) => r.outcome === 'unknown')
        assert.deepEqual([reset.id, reset.reason], [userIdOf(1), 'upstream_unknown'], JSON.stringify(reset))
        assert.match(reset.error, /closed the connection after the request was sent, before answering .*the write may or may not have happened/)
      }))
  })
}
