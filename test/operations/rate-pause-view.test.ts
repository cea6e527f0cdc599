import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { renderOperation } from '../../src/cli/commands/operation.js'
import { operationSummary } from '../../src/mcp/tools/operations.js'
import { operationProgressLine } from '../../src/cli/watch-operation.js'
import { STORE_KINDS } from '../support/stores.js'
import { userIdOf } from './support/users-upstream.js'
import { withFaultGateway } from './support/fault-gateway.js'
import { AGENT, createHarness } from './support/harness.js'

/**
 * A Retry-After pause under the bound was invisible: for up to `max_retry_after_seconds` (300 s by default) the
 * operation said only `running`, as if writes were going on. The pause is now on the operation's row (so
 * another instance, or one restarted, shows it too) and in its view: `paused: { until, reason }`, the reason
 * the upstream's own 429 and Retry-After; the CLI, the MCP summary and the watch line say it; cleared once
 * writes resume. Real loopback upstream; the pause is 3 s of real time.
 */
const FIRST = userIdOf(1)

for (const kind of STORE_KINDS)
  describe(`${kind}: a Retry-After pause is shown while it lasts`, () => {
    test('paused (until when, why) on the view, the row, the CLI, MCP and watch line; cleared after', () =>
      withFaultGateway(kind, 2, { concurrency: 1, batch_size: 10 }, async (ctx) => {
        ctx.upstream.onWrite = (t) => (t.n === 1 ? t.send(429, { error: 'slow down' }, { 'retry-after': '3' }) : t.send(...t.apply()))
        const id = await ctx.commit(`pause-view-${kind}`)
        const asked = Date.now()
        let seen: any = null
        while (Date.now() - asked < 2_500) {
          const res = await ctx.agent('GET', `/v1/operations/${id}`)
          assert.equal(res.status, 200, JSON.stringify(res.body))
          if (res.body.paused) {
            seen = res.body
            break
          }
          await new Promise((resolve) => setTimeout(resolve, 50))
        }
        assert.ok(seen, 'the view said paused during the 3 s pause')
        assert.equal(seen.state, 'running')
        const until = Date.parse(seen.paused.until)
        assert.ok(until > Date.now() && until <= asked + 4_000, `until ${seen.paused.until}`)
        assert.match(seen.paused.reason, /rate limiting \(429\); retry after 3 s/)
        assert.equal(seen.paused.target_id, FIRST)
        const row = await ctx.fx.gateway.store.db.selectFrom('operations').select(['paused_until', 'pause_reason']).where('id', '=', id).executeTakeFirstOrThrow()
        assert.equal(row.paused_until, seen.paused.until, 'persisted: another instance reads the same')
        assert.match(row.pause_reason ?? '', /429/)
        for (const text of [renderOperation(seen), operationSummary(seen), operationProgressLine(seen, 1000, 0)]) {
          assert.match(text, /paused until/i, text)
          assert.match(text, /429/, text)
        }

        const op = await ctx.finished(id)
        assert.equal(op.state, 'succeeded', JSON.stringify(op))
        assert.equal(op.paused, null, 'no pause once finished')
        const after = await ctx.fx.gateway.store.db.selectFrom('operations').select(['paused_until', 'pause_reason']).where('id', '=', id).executeTakeFirstOrThrow()
        assert.deepEqual(after, { paused_until: null, pause_reason: null }, 'cleared once writes resumed')
      }))
  })

/**
 * The pause is on the row: an executor stopped during it (a restart, the gateway closing) leaves it there, and
 * the instance that resumes the operation shows it and waits out the rest before writing, rather than read
 * `running` and send the refused write again at once.
 */
describe('a pause outlives its executor', () => {
  test('closed mid-pause: another instance shows the same pause and writes only after it ends', async () => {
    const h = await createHarness('sqlite', { count: 2, execution: { concurrency: 1 } })
    try {
      h.upstream.retryAfterSeconds = 3
      let retriedAt = 0
      h.upstream.behaviour = (id, call) => {
        if (id === 'u0000' && call === 1) return 'rate_limited'
        if (id === 'u0000' && call === 2) retriedAt = Date.now()
        return 'success'
      }
      const receipt = await h.operations.commitPlan(AGENT, h.plan.plan_id, { expectedDigest: h.plan.plan_digest, idempotencyKey: 'k-outlive' })
      const id = receipt.operation_id
      let first = await h.operations.get(AGENT, id)
      for (let i = 0; i < 100 && !first.paused; i++) {
        await new Promise((resolve) => setTimeout(resolve, 20))
        first = await h.operations.get(AGENT, id)
      }
      assert.ok(first.paused, 'paused on the first instance')
      await h.operations.close()
      const other = h.instance()
      try {
        const seen = await other.get(AGENT, id)
        assert.deepEqual(seen.paused, first.paused, 'the same pause, read from the row')
        await other.recover()
        const view = await other.waitFor(id, 20_000)
        assert.equal(view.state, 'succeeded', JSON.stringify(view))
        assert.ok(retriedAt >= Date.parse(first.paused.until) - 5, `retried at ${new Date(retriedAt).toISOString()}, pause until ${first.paused.until}`)
        assert.equal(view.paused, null)
      } finally {
        await other.close()
      }
    } finally {
      await h.close()
    }
  })
})
