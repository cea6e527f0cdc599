import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { DEFAULT_MAX_RATE_LIMIT_RETRIES } from '../../src/operations/index.js'
import { STORE_KINDS } from '../support/stores.js'
import { withFaultGateway } from './support/fault-gateway.js'
import { userIdOf } from './support/users-upstream.js'

/**
 * The 429s counted toward `max_rate_limit_retries` are kept on the target's ledger row, so an executor resuming the
 * operation goes on counting (see rate-limit-across-restart.test.ts). A write's or re-read's "not now" is counted
 * as the target goes back to pending; a batch's membership read answered so is counted against the batch's first
 * target, which was never claimed: that count must reach its row too, or a restart between such reads starts it at 0.
 */
const FIRST = userIdOf(1)

for (const kind of STORE_KINDS) {
  describe(`a batch membership read answered "not now" again and again (${kind} store)`, () => {
    test('each is counted on the first target\'s row until the operation halts (rate_limit_retries)', () =>
      withFaultGateway(kind, 2, { concurrency: 1, batch_size: 10 }, async (ctx) => {
        ctx.upstream.onReadAnswer = (id) => (id === FIRST ? [503, { error: 'maintenance' }, { 'retry-after': '0' }] : undefined)
        const id = await ctx.commit(`membership-429-${kind}`)
        const op = await ctx.finished(id)
        assert.equal(op.state, 'halted', JSON.stringify(op))
        assert.equal(op.halt_reason.rule, 'rate_limit_retries', JSON.stringify(op.halt_reason))
        assert.deepEqual(ctx.upstream.writeLog, [], 'nothing was written')
        const row = await ctx.fx.gateway.store.db.selectFrom('operation_targets').select(['state', 'rate_limit_hits']).where('operation_id', '=', id).where('record_id', '=', FIRST).executeTakeFirstOrThrow()
        // the one past the limit halts the operation; each before it was counted on the row
        assert.deepEqual([row.state, Number(row.rate_limit_hits)], ['pending', DEFAULT_MAX_RATE_LIMIT_RETRIES])
      }))
  })
}
