import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { STORE_KINDS } from '../support/stores.js'
import { allResults } from './support/flow.js'
import { withFaultGateway } from './support/fault-gateway.js'
import { userIdOf } from './support/users-upstream.js'

/**
 * A target's `attempts` counts the writes sent upstream for it. Each 429 pauses the operation and puts back to
 * pending, unstarted, the targets claimed behind the one answered so; the claim had counted an attempt for each,
 * and the next claim counted another: a target held back behind another's 429s showed attempts no request was
 * ever made for (11 with no write, seen once). A real loopback upstream answers the first target's write 429
 * (Retry-After: 0) three times; every target's attempts must equal the writes the upstream itself counted for it.
 */
const FIRST = userIdOf(1)

for (const kind of STORE_KINDS) {
  describe(`attempts of targets held back by a rate-limit pause (${kind} store)`, () => {
    test('each target\'s attempts equal the writes the upstream received for it', { timeout: 90_000 }, () =>
      withFaultGateway(kind, 6, { concurrency: 2, batch_size: 10 }, async (ctx) => {
        ctx.upstream.onWrite = (t) => {
          if (t.id === FIRST && (ctx.upstream.writes.get(t.id) ?? 0) <= 3) return t.send(429, { error: 'slow down' }, { 'retry-after': '0' })
          t.send(...t.apply())
        }
        const id = await ctx.commit(`attempts-${kind}`)
        const op = await ctx.finished(id)
        assert.equal(op.state, 'succeeded', JSON.stringify(op))
        const results = await allResults(ctx.agent, id)
        assert.equal(ctx.upstream.writes.get(FIRST), 4)
        assert.deepEqual(
          Object.fromEntries(results.map((r) => [r.id, r.attempts])),
          Object.fromEntries(results.map((r) => [r.id, ctx.upstream.writes.get(r.id) ?? 0])),
          'attempts as the upstream counted them',
        )
      }))
  })
}
