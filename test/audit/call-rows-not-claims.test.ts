import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { withFaultGateway } from '../operations/support/fault-gateway.js'
import { userIdOf } from '../operations/support/users-upstream.js'

/**
 * A listed row's `refused_claim` took any row whose summary held a 4xx status as a refused request, call rows
 * included: the operation's own PATCH answered 429 by the upstream was listed (GET /v1/audit?operation_id=, `warrant
 * audit query`, the operation page) as a claim "not its event", though the gateway made that call for the operation.
 * Only a run-level row (a request) can be a refused claim; a call row's 4xx is the upstream's answer. Real loopback
 * upstream answering the first write 429 with Retry-After 1.
 */
describe('an upstream call answered 4xx is the operation\'s own row, not a refused claim', () => {
  test('GET /v1/audit?operation_id=: the 429 call row says refused_claim false; a refused request naming the operation says true', () =>
    withFaultGateway('sqlite', 2, { concurrency: 1, batch_size: 10 }, async (ctx) => {
      ctx.upstream.onWrite = (t) => (t.n === 1 ? t.send(429, { error: 'slow down' }, { 'retry-after': '1' }) : t.send(...t.apply()))
      const id = await ctx.commit('call-rows-not-claims')
      assert.equal((await ctx.fx.gateway.operations.waitFor(id, 30_000)).state, 'succeeded')
      assert.equal((await ctx.agent('POST', `/v1/operations/${id}/compensation`, { targets: [] })).status, 400)
      await ctx.fx.gateway.audit.flush()
      const listed = await ctx.reviewer('GET', `/v1/audit?operation_id=${id}&limit=1000`)
      assert.equal(listed.status, 200, JSON.stringify(listed.body))
      const events = listed.body.events as { level: string; action: string; target_id: string | null; summary: any; refused_claim: boolean }[]
      const throttled = events.filter((e) => e.level === 'call' && e.summary.status === 429)
      assert.equal(throttled.length, 1, JSON.stringify(events.map((e) => [e.level, e.action, e.summary.status])))
      assert.equal(throttled[0]!.target_id, userIdOf(1))
      assert.equal(throttled[0]!.refused_claim, false, 'the upstream answered the operation\'s own call')
      assert.deepEqual(
        events.filter((e) => e.refused_claim).map((e) => e.action),
        ['POST /v1/operations/:id/compensation'],
        'only the refused request is a claim',
      )
    }))
})
