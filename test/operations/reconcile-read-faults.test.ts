import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { STORE_KINDS } from '../support/stores.js'
import { allResults } from './support/flow.js'
import { withFaultGateway } from './support/fault-gateway.js'
import { userIdOf } from './support/users-upstream.js'

/**
 * Reconciliation claims an outcome only from a record it read: a read answered 429 or 5xx, or a record deleted
 * since, leaves the target `unknown` (never `failed` "not applied", never `succeeded`), and a later reconcile that
 * reads the record settles it. Real loopback upstream; the write applied and its connection cut (no answer).
 */
for (const kind of STORE_KINDS) {
  describe(`reconcile against an upstream that cannot answer for the record (${kind} store)`, () => {
    test('429, 503 and a deleted record leave it unknown; a readable record settles it', () =>
      withFaultGateway(kind, 2, { concurrency: 1, batch_size: 10, reconcile_settle_seconds: 0 }, async ({ upstream, agent, commit, finished }) => {
        const FIRST = userIdOf(1)
        upstream.onWrite = (t) => {
          if (t.id !== FIRST) return t.send(...t.apply())
          t.apply()
          t.destroy()
        }
        const id = await commit(`reconcile-faults-${kind}`)
        await finished(id)
        const first = async () => (await allResults(agent, id)).find((r) => r.id === FIRST)
        assert.equal((await first()).outcome, 'unknown', JSON.stringify(await first()))
        const reconcile = async () => {
          const res = await agent('POST', `/v1/operations/${id}/reconcile`)
          assert.equal(res.status, 200, JSON.stringify(res.body))
          return res.body
        }
        const answers: [number, Record<string, string>][] = [
          [429, { 'retry-after': '30' }],
          [503, {}],
          [500, {}],
        ]
        for (const [status, headers] of answers) {
          upstream.onReadAnswer = (rid) => (rid === FIRST ? [status, { error: 'not now' }, headers] : undefined)
          const report = await reconcile()
          assert.deepEqual([report.examined, report.still_unknown, report.succeeded, report.failed], [1, 1, 0, 0], JSON.stringify(report))
          const row = await first()
          assert.deepEqual([row.outcome, row.reason], ['unknown', 'reconcile_unreadable'], `${status}: ${JSON.stringify(row)}`)
          assert.equal(report.operation.counts.unknown, 1)
        }
        upstream.onReadAnswer = () => undefined
        const applied = upstream.users.get(FIRST)!
        upstream.users.delete(FIRST)
        let report = await reconcile()
        assert.deepEqual([report.still_unknown, report.failed], [1, 0], JSON.stringify(report))
        assert.deepEqual([(await first()).outcome, (await first()).reason], ['unknown', 'reconcile_missing'])
        upstream.users.set(FIRST, applied)
        report = await reconcile()
        assert.deepEqual([report.succeeded, report.still_unknown], [1, 0], JSON.stringify(report))
        assert.deepEqual([(await first()).outcome, (await first()).reason], ['succeeded', 'reconciled'])
        assert.equal(report.operation.state, 'succeeded', JSON.stringify(report.operation))
      }))
  })
}
