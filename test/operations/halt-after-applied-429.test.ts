import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { renderOperation } from '../../src/cli/commands/operation.js'
import { operationSummary } from '../../src/mcp/tools/operations.js'
import { rateLimitedText } from '../../src/ui/pages/operation.js'
import { STORE_KINDS } from '../support/stores.js'
import { allResults } from './support/flow.js'
import { withFaultGateway } from './support/fault-gateway.js'
import { userIdOf } from './support/users-upstream.js'

/**
 * A write the upstream applied and answered 429 puts its target back to `pending` (`write_sent`), to be read again
 * before a retry. When the operation halted before that retry (here: another target's write refused 401, which
 * halts), the target stayed `pending` for good: a halted operation is final, reconcile reads only `unknown` targets,
 * and every view said it was never attempted ("nothing was written yet") while the record held our change. It is now
 * `unknown` at the halt (its write was sent, answered 429, not retried because the operation halted), counted so
 * on every view, recorded in the audit log, and reconcile settles it from the record. A pending target whose write
 * was never sent stays pending.
 */
for (const kind of STORE_KINDS) {
  describe(`an operation halted after a write answered 429 (${kind} store)`, () => {
    const run = (applied: boolean, body: (ctx: { agent: any; id: string; operation: any; results: any[]; audit: () => Promise<any[]>; db: any }) => Promise<void>) =>
      withFaultGateway(kind, 3, { concurrency: 2, batch_size: 10, reconcile_settle_seconds: 0 }, async ({ fx, upstream, agent, commit, finished }) => {
        let firstAnswered!: () => void
        const answered = new Promise<void>((resolve) => (firstAnswered = resolve))
        let secondArrived!: () => void
        const arrived = new Promise<void>((resolve) => (secondArrived = resolve))
        upstream.onWrite = async (t) => {
          if (t.id === userIdOf(1)) {
            await arrived // both writes are at the upstream before either is answered
            if (applied) t.apply()
            t.send(429, { error: 'slow down' }, { 'retry-after': '5' })
            firstAnswered()
            return
          }
          if (t.id === userIdOf(2)) {
            secondArrived()
            await answered
            await new Promise((r) => setTimeout(r, 200)) // the 429 is in the ledger first
            t.send(401, { error: 'this credential may not change roles' })
            return
          }
          t.send(...t.apply())
        }
        const id = await commit(`halt-after-429-${applied}-${kind}`)
        const operation = await finished(id)
        const audit = () => fx.gateway.store.db.selectFrom('audit_events').selectAll().where('operation_id', '=', id).where('action', 'like', 'operation.%').execute()
        await body({ agent, id, operation, results: await allResults(agent, id), audit, db: fx.gateway.store.db })
        assert.equal(upstream.writes.get(userIdOf(1)), 1, 'never sent again')
        assert.equal(upstream.writes.get(userIdOf(3)) ?? 0, 0, 'the target after the halt is never sent')
      })

    test('the target whose write was sent is unknown, not pending; reconcile finds it applied', () =>
      run(true, async ({ agent, id, operation, results, audit }) => {
        assert.equal(operation.state, 'halted', JSON.stringify(operation))
        assert.equal(operation.halt_reason?.rule, 'authorization_failure', JSON.stringify(operation))
        const [first, second, third] = [1, 2, 3].map((n) => results.find((r) => r.id === userIdOf(n)))
        assert.deepEqual([first.outcome, first.reason], ['unknown', 'rate_limited_halted'], JSON.stringify(first))
        assert.match(first.error, /was sent and answered 429 \(rate limited\) and not retried because the operation halted/)
        assert.match(first.reason_text, /not retried: the operation halted first/)
        assert.deepEqual([second.outcome, second.reason], ['failed', 'unauthorized'])
        assert.deepEqual([third.outcome, third.reason], ['pending', null], 'never sent: still pending')
        assert.deepEqual(operation.counts, { pending: 1, in_flight: 0, succeeded: 0, failed: 1, skipped: 0, unknown: 1 }, JSON.stringify(operation))
        const halted = (await audit()).find((e) => e.action === 'operation.halted')
        assert.ok(halted, 'the halt is in the audit log')
        const summary = JSON.parse(halted.summary)
        assert.deepEqual(summary.rate_limited_writes_now_unknown, [userIdOf(1)], halted.summary)
        assert.deepEqual(summary.counts, operation.counts)

        // no surface says every 429 was waited out and asked again: the last one never was
        const view = (await agent('GET', `/v1/operations/${id}`)).body
        assert.equal(view.rate_limit_hits, 1, JSON.stringify(view))
        // an http resource's waits are still said as its 429s (sql-lock-wait-words.test.ts: a database's lock waits)
        assert.equal(view.rate_limit_kind, 'http')
        assert.match(renderOperation(view), /rate limited: the upstream answered "not now" \(429, or 503 with Retry-After\) 1 time\(s\)/)
        for (const text of [renderOperation(view), operationSummary(view), rateLimitedText(view)]) {
          assert.match(text, /asked again until the operation halted/, text)
          assert.match(text, /1 unknown|1 target ended unknown|unknown where its write was sent/, text)
        }

        const reconcile = await agent('POST', `/v1/operations/${id}/reconcile`)
        assert.equal(reconcile.status, 200, JSON.stringify(reconcile.body))
        const settled = (await allResults(agent, id)).find((r) => r.id === userIdOf(1))
        assert.deepEqual([settled.outcome, settled.reason], ['succeeded', 'reconciled'], JSON.stringify(settled))
        assert.deepEqual(settled.before, { role: 'member' })
        const after = (await agent('GET', `/v1/operations/${id}`)).body
        assert.equal(after.state, 'halted')
        assert.deepEqual(after.counts, { pending: 1, in_flight: 0, succeeded: 1, failed: 1, skipped: 0, unknown: 0 }, JSON.stringify(after))
      }))

    test('an operation halted before this fix, its target left pending: reconcile turns it unknown first and settles it', () =>
      run(true, async ({ agent, id, db }) => {
        // the ledger as an earlier version left it: pending, its write sent and answered 429
        const reset = await db.updateTable('operation_targets').set({ state: 'pending', reason: 'rate_limited', error: JSON.stringify({ message: 'slow down', write_sent: true }), unknown_since: null }).where('operation_id', '=', id).where('record_id', '=', userIdOf(1)).executeTakeFirst()
        assert.equal(Number(reset.numUpdatedRows), 1)
        await db.updateTable('operations').set({ counts: JSON.stringify({ pending: 2, in_flight: 0, succeeded: 0, failed: 1, skipped: 0, unknown: 0 }) }).where('id', '=', id).execute()
        const reconcile = await agent('POST', `/v1/operations/${id}/reconcile`)
        assert.equal(reconcile.status, 200, JSON.stringify(reconcile.body))
        const settled = (await allResults(agent, id)).find((r) => r.id === userIdOf(1))
        assert.deepEqual([settled.outcome, settled.reason], ['succeeded', 'reconciled'], JSON.stringify(settled))
        assert.deepEqual(reconcile.body.operation.counts, { pending: 1, in_flight: 0, succeeded: 1, failed: 1, skipped: 0, unknown: 0 }, JSON.stringify(reconcile.body))
      }))

    test('a write answered 429 that did not land: reconcile finds the record unmoved, not applied', () =>
      run(false, async ({ agent, id, results }) => {
        const first = results.find((r) => r.id === userIdOf(1))
        assert.deepEqual([first.outcome, first.reason], ['unknown', 'rate_limited_halted'], JSON.stringify(first))
        const reconcile = await agent('POST', `/v1/operations/${id}/reconcile`)
        assert.equal(reconcile.status, 200, JSON.stringify(reconcile.body))
        const settled = (await allResults(agent, id)).find((r) => r.id === userIdOf(1))
        assert.deepEqual([settled.outcome, settled.reason], ['failed', 'not_applied'], JSON.stringify(settled))
      }))
  })
}
