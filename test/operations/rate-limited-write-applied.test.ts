import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { STORE_KINDS } from '../support/stores.js'
import { allResults, selectProposeApprove, waitForOperation } from './support/flow.js'
import { withUsersGateway, type UsersGateway } from './support/users-gateway.js'
import { userIdOf, type User } from './support/users-upstream.js'
import { withFaultGateway } from './support/fault-gateway.js'
import { runAcrossRestart } from './support/restart-trial.js'

const ROLE = { type: 'set_role', role: 'viewer' }
const RATE_LIMITED = { status: 429, body: { error: 'slow down' }, headers: { 'retry-after': '1' } }

async function commitRole(ctx: UsersGateway, key: string) {
  const { selection } = await selectProposeApprove(ctx.agent, [ctx.reviewer], 'users', { filter: { status: 'active' } }, ROLE)
  const commit = await ctx.agent('POST', '/v1/resources/users/bulk-actions', { selection_id: selection.selection_id, expected_digest: selection.digest, action: ROLE }, { 'idempotency-key': key })
  assert.equal(commit.status, 202, JSON.stringify(commit.body))
  const operation = await waitForOperation(ctx.agent, commit.body.operation_id)
  return { operation, results: await allResults(ctx.agent, commit.body.operation_id) }
}

/**
 * The upstream applies the first PATCH and answers it 429 all the same (a rate limiter behind the handler). The
 * target went back to pending; on its retry the re-read found it at a new version, and it was recorded `skipped`,
 * version_changed, "nothing was written": a write that landed, never to be compensated or reconciled. It is now
 * `unknown` (`rate_limited_applied`), not sent again, and reconcile settles it, with the before-value read before
 * the write (a compensation restores it). A 429 on a write that did not
 * land is retried and written once; a record another writer moved elsewhere meanwhile is still skipped.
 * Where the retry's own read lagged (a replica still at the old version), the retry was sent, refused 412, and the
 * re-read then showed the record moved: skipped version_changed "nothing was written", for our own first write.
 * An operation halted on such a target's retries left it pending "nothing was written yet"; it is now unknown
 * (halt-after-applied-429.test.ts).
 */
for (const kind of STORE_KINDS) {
  describe(`a write answered 429 that the upstream applied (${kind} store)`, () => {
    test('is unknown on its retry, never skipped as changed by another writer, not sent again; reconcile settles it', () =>
      withUsersGateway(kind, 2, { concurrency: 1, batch_size: 10, reconcile_settle_seconds: 0 }, async (ctx) => {
        ctx.upstream.onWrite = (_id, n) => (n === 1 ? { refuse: { ...RATE_LIMITED, changedBy: { role: 'viewer' } } } : undefined)
        const { operation, results } = await commitRole(ctx, `applied-429-${kind}`)
        const first = results.find((r) => r.id === userIdOf(1))
        assert.deepEqual([first.outcome, first.reason], ['unknown', 'rate_limited_applied'], JSON.stringify(first))
        assert.match(first.error, /was answered 429 \(rate limited\), yet the record is now at version 2, not version 1, holding the approved values: that write may have been applied/)
        assert.deepEqual(operation.counts, { pending: 0, in_flight: 0, succeeded: 1, failed: 0, skipped: 0, unknown: 1 }, JSON.stringify(operation))
        assert.equal(ctx.upstream.writes.get(userIdOf(1)), 1, 'not sent again')
        const reconcile = await ctx.agent('POST', `/v1/operations/${operation.operation_id}/reconcile`)
        assert.equal(reconcile.status, 200, JSON.stringify(reconcile.body))
        const settled = (await allResults(ctx.agent, operation.operation_id)).find((r) => r.id === userIdOf(1))
        assert.equal(settled.outcome, 'succeeded', JSON.stringify(settled))
        // the before-value as read before the write answered 429, not the one its retry read after it landed
        assert.deepEqual(settled.before, { role: 'member' }, JSON.stringify(settled))
      }))

    test('the retry read from a lagging replica, its write refused 412: still unknown, never skipped', () =>
      withFaultGateway(kind, 2, { concurrency: 1, batch_size: 10 }, async ({ upstream, agent, commit, finished }) => {
        let stale: User | undefined
        let lagged = false
        upstream.onWrite = (t) => {
          if (t.n !== 1) return t.send(...t.apply())
          stale = t.before
          t.apply()
          t.send(429, { error: 'slow down' }, { 'retry-after': '1' })
        }
        // the retry's read before its write is served the record as it was before the first write
        upstream.onRead = (id) => (id === userIdOf(1) && stale && !lagged ? ((lagged = true), stale) : undefined)
        const id = await commit(`lagged-429-${kind}`)
        const operation = await finished(id)
        const first = (await allResults(agent, id)).find((r) => r.id === userIdOf(1))
        assert.deepEqual([first.outcome, first.reason, first.upstream_status], ['unknown', 'rate_limited_applied', 412], JSON.stringify(first))
        assert.equal(upstream.writes.get(userIdOf(1)), 2, 'the retry was sent (and refused)')
        assert.deepEqual(operation.counts, { pending: 0, in_flight: 0, succeeded: 1, failed: 0, skipped: 0, unknown: 1 }, JSON.stringify(operation))
      }))

    test('halted on its retries, a target whose write was answered 429 is not said to be one nothing was written to', () =>
      withUsersGateway(kind, 2, { concurrency: 1, batch_size: 10 }, async (ctx) => {
        ctx.upstream.onWrite = () => ({ refuse: { ...RATE_LIMITED, headers: { 'retry-after': '0' } } })
        const { operation, results } = await commitRole(ctx, `halted-429-${kind}`)
        assert.equal(operation.halt_reason?.rule, 'rate_limit_retries', JSON.stringify(operation))
        const first = results.find((r) => r.id === userIdOf(1))
        // never retried once halted: unknown (reconcile settles it), not pending as if never attempted
        assert.deepEqual([first.outcome, first.reason], ['unknown', 'rate_limited_halted'], JSON.stringify(first))
        assert.match(first.reason_text, /^its write was sent and answered 429 \(rate limited\), and not retried: the operation halted first/)
        assert.doesNotMatch(first.reason_text, /nothing was written/)
      }))

    test('the executor stopped during the pause after such a 429: the next process, from the ledger alone, finds it unknown and sends nothing again', async () => {
      let n = 0
      // the first write is applied and answered 429; the first gateway closes during it, in the pause that follows
      const answer = () => (++n === 1 ? { refuse: { status: 429, body: { error: 'slow down' }, headers: { 'retry-after': '2' }, changedBy: { role: 'viewer' } } } : {})
      await runAcrossRestart(kind, { count: 2, execution: { concurrency: 1 }, stopAt: 1, answer }, ({ row, upstream }) => {
        assert.equal(row.state, 'completed_with_unknown', JSON.stringify(row))
        assert.equal(upstream.writes.get(userIdOf(1)), 1, 'not sent again after the restart')
        assert.equal(upstream.writes.get(userIdOf(2)), 1)
      })
    })

    test('a 429 on a write not applied is retried and written once; one moved by another writer meanwhile is skipped', () =>
      withUsersGateway(kind, 2, { concurrency: 1, batch_size: 10 }, async (ctx) => {
        ctx.upstream.onWrite = (_id, n) => (n === 1 ? { refuse: RATE_LIMITED } : undefined)
        const { results } = await commitRole(ctx, `plain-429-${kind}`)
        assert.deepEqual(results.map((r) => r.outcome), ['succeeded', 'succeeded'], JSON.stringify(results))
        assert.equal(ctx.upstream.writes.get(userIdOf(1)), 2)
      }).then(() =>
        withUsersGateway(kind, 2, { concurrency: 1, batch_size: 10 }, async (ctx) => {
          ctx.upstream.onWrite = (_id, n) => (n === 1 ? { refuse: { ...RATE_LIMITED, changedBy: { role: 'admin' } } } : undefined)
          const { results } = await commitRole(ctx, `moved-429-${kind}`)
          const first = results.find((r) => r.id === userIdOf(1))
          assert.deepEqual([first.outcome, first.reason], ['skipped', 'version_changed'], JSON.stringify(first))
        }),
      ))
  })
}
