import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { describe, test } from 'node:test'
import type { WarrantConfig } from '../../src/config/index.js'
import { createLogger, openGateway, type Gateway } from '../../src/gateway/index.js'
import { STORE_KINDS, type StoreKind } from '../support/stores.js'
import { approvedClosingPlan, startOddUpstream, startThingsGateway, type OddUpstream } from '../plans/support/odd-upstream.js'

/**
 * A `things` resource over two sources on two servers: "odd" (the odd upstream's ids, slashes, unicode and all,
 * weak ETags) and "annex" (its own ids). A record's address is (source, id): the executor re-reads and writes each
 * target on the source its member was frozen from. Was: by id alone, across the sources. A thing frozen from
 * "odd" that moved to "annex" (deleted on odd, the same thing created on annex: same content, so the same ETag)
 * was found on annex by the batch's re-read, at the frozen version, still open, and the PATCH went to annex:
 * `succeeded` on a record nobody selected.
 */
async function twoSources(kind: StoreKind) {
  const annex = await startOddUpstream()
  annex.things.clear()
  annex.things.set('annex-1', { id: 'annex-1', name: 'n', status: 'open', note: 'n' })
  const things = await startThingsGateway([], kind, (c) => {
    c.resources.things.connector.sources.push({ name: 'annex', base_url: annex.origin })
    c.execution = { batch_size: 100, concurrency: 1 }
  })
  const agent = await things.fx.gateway.principals.authenticate(things.token, 'http')
  return {
    fx: things.fx,
    agent,
    odd: things.up,
    annex,
    async close() {
      await things.close()
      await annex.close()
    },
  }
}

function moveThing(from: OddUpstream, to: OddUpstream, id: string): void {
  const thing = from.things.get(id)!
  from.things.delete(id)
  to.things.set(id, { ...thing })
}

for (const kind of STORE_KINDS) {
  describe(`targets are re-read and written on the source their member was frozen from (${kind} store)`, () => {
    test('a member moved to another source since the freeze is gone from its own: nothing is written on the other', async () => {
      const t = await twoSources(kind)
      try {
        const { selection, plan } = await approvedClosingPlan(t.fx, t.agent)
        assert.equal(selection.count, 8)
        moveThing(t.odd, t.annex, 'plain')
        const receipt = await t.fx.gateway.operations.commitPlan(t.agent, plan.plan_id, { idempotencyKey: randomUUID(), expectedDigest: plan.plan_digest })
        const done = await t.fx.gateway.operations.waitFor(receipt.operation_id, 30_000)
        assert.equal(t.annex.writes.get('plain'), undefined, 'annex/plain, never selected, was written for the member odd/plain')
        assert.equal(t.annex.things.get('plain')!.status, 'open')
        assert.equal(done.state, 'halted', JSON.stringify(done))
        assert.equal(done.halt_reason?.rule, 'membership_changed')
        assert.equal(done.halt_reason?.target_id, 'plain')
        assert.match(done.halt_reason?.message ?? '', /no longer exists/)
      } finally {
        await t.close()
      }
    })

    test('another source holding the same id does not keep a target from its own source, nor is written', async () => {
      const t = await twoSources(kind)
      try {
        const { plan } = await approvedClosingPlan(t.fx, t.agent)
        // annex now holds a thing of one of odd's ids too: another record, which a read by id alone refuses as named twice
        t.annex.things.set('x y', { id: 'x y', name: 'other', status: 'open', note: 'annex' })
        const receipt = await t.fx.gateway.operations.commitPlan(t.agent, plan.plan_id, { idempotencyKey: randomUUID(), expectedDigest: plan.plan_digest })
        const done = await t.fx.gateway.operations.waitFor(receipt.operation_id, 30_000)
        assert.equal(done.state, 'succeeded', JSON.stringify(done))
        assert.equal(t.odd.things.get('x y')!.status, 'closed')
        assert.deepEqual([t.annex.things.get('x y')!.status, t.annex.writes.get('x y')], ['open', undefined], "annex's own x y was written")
        assert.equal(t.annex.things.get('annex-1')!.status, 'closed')
      } finally {
        await t.close()
      }
    })

    test('a source renamed since the plan was proposed: its commit is refused, nothing is written anywhere', async () => {
      const t = await twoSources(kind)
      let renamed: Gateway | undefined
      try {
        const { plan } = await approvedClosingPlan(t.fx, t.agent)
        // a second gateway on the same store whose config calls the annex "spare": the members frozen from "annex"
        // name a source it no longer declares
        await t.fx.gateway.audit.flush()
        const config = structuredClone(t.fx.config) as WarrantConfig & { resources: Record<string, any> }
        config.resources.things.connector.sources[1].name = 'spare'
        renamed = await openGateway({ config, log: createLogger({ level: 'silent' }) })
        await assert.rejects(renamed.operations.commitPlan(t.agent, plan.plan_id, { idempotencyKey: randomUUID(), expectedDigest: plan.plan_digest }), (error: Error & { code?: string }) => {
          assert.equal(error.code, 'conflict', error.message)
          assert.match(error.message, /elsewhere|moved/)
          return true
        })
        assert.equal(t.annex.writes.size + t.odd.writes.size, 0)
      } finally {
        await renamed?.close()
        await t.close()
      }
    })
  })
}
