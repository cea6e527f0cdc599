import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { describe, test } from 'node:test'
import type { WarrantConfig } from '../../src/config/index.js'
import { createLogger, openGateway } from '../../src/gateway/index.js'
import { call, serveGateway } from '../support/gateway-fixture.js'
import { STORE_KINDS } from '../support/stores.js'
import { approvedClosingPlan, startThingsToMove } from './support/odd-upstream.js'

/**
 * A plan approved under config A; a gateway starts on config B (its action redefined) and stops, nobody having looked
 * at the plan; the gateway starts on A again. The drift was recorded only when something viewed the plan, so this one
 * left no mark and the approval given before it counted again: the commit ran. Every gateway now records, when it
 * opens, the drift of each open plan under the config it runs, so the approval given before it stays void.
 */
/** A gateway opened on `config`, serving HTTP: an agent of it commits the plan; the answer, once it is closed again. */
async function commitOnConfig(config: WarrantConfig, plan: { readonly plan_id: string; readonly plan_digest: string }) {
  const gateway = await openGateway({ config: structuredClone(config), log: createLogger({ level: 'silent' }) })
  const server = await serveGateway(gateway)
  try {
    const token = (await gateway.principals.issue({ name: `agent-${randomUUID()}`, role: 'agent', scopes: { resources: ['things'], actions: '*' } })).token
    return await call(server.base, 'POST', `/v1/plans/${plan.plan_id}/commit`, { expected_digest: plan.plan_digest }, { authorization: `Bearer ${token}`, 'idempotency-key': randomUUID() })
  } finally {
    await server.stop()
    await gateway.close()
  }
}

for (const kind of STORE_KINDS) {
  describe(`a drift nobody viewed is recorded when a gateway opens (${kind} store)`, () => {
    test('approve under A, open and close on B unviewed, open on A: the commit is 403 not_approved', { timeout: 120_000 }, async () => {
      const things = await startThingsToMove(kind)
      const { fx, staging, agent } = things
      try {
        const { plan } = await approvedClosingPlan(fx, agent)
        await fx.gateway.audit.flush()

        // config B: the action redefined (no precondition); opened and closed, the plan never viewed
        const configB = structuredClone(fx.config) as WarrantConfig & { resources: Record<string, any> }
        configB.resources.things.actions.set_status.precondition = {}
        const b = await openGateway({ config: configB, log: createLogger({ level: 'silent' }) })
        await b.close()

        // config A again
        const stale = await commitOnConfig(fx.config, plan)
        assert.equal(stale.status, 403, JSON.stringify(stale.body))
        assert.equal(stale.body.error.code, 'not_approved')
        assert.match(stale.body.error.message, /config moved under this plan after it was given/)
        assert.equal([...staging.writes.values()].length, 0, 'nothing was written')
        const row = await fx.gateway.store.db.selectFrom('plans').select(['config_drifted_at', 'config_drift']).where('id', '=', plan.plan_id).executeTakeFirstOrThrow()
        assert.deepEqual(JSON.parse(row.config_drift ?? 'null'), ['action_redefined'])
      } finally {
        await things.close()
      }
    })

    test('approve under A, open and close on a shortened TTL unviewed, open on A: the cut holds, the commit is refused', { timeout: 120_000 }, async () => {
      const things = await startThingsToMove(kind)
      const { fx, staging, agent } = things
      try {
        const { plan } = await approvedClosingPlan(fx, agent)
        await fx.gateway.audit.flush()
        const given = await fx.gateway.store.db.selectFrom('approvals').select(['id', 'decided_at', 'expires_at']).where('plan_id', '=', plan.plan_id).executeTakeFirstOrThrow()

        // the TTL cut to 0.3 s, past by the time a gateway opens on it; nobody views the plan
        const shortened = structuredClone(fx.config) as WarrantConfig & { resources: Record<string, any> }
        shortened.resources.things.approval = { ...(shortened.resources.things.approval ?? {}), ttl_minutes: 0.005 }
        await new Promise((resolve) => setTimeout(resolve, 600))
        const b = await openGateway({ config: shortened, log: createLogger({ level: 'silent' }) })
        await b.close()
        const cut = await fx.gateway.store.db.selectFrom('approvals').select('expires_at').where('id', '=', given.id).executeTakeFirstOrThrow()
        assert.ok(cut.expires_at !== null && given.expires_at !== null && cut.expires_at < given.expires_at, JSON.stringify({ given, cut }))

        const stale = await commitOnConfig(fx.config, plan)
        assert.equal(stale.status, 410, JSON.stringify(stale.body))
        assert.equal(stale.body.error.code, 'expired')
        // the cut stored at B's start is still named as one (the expiry it was given with is kept, 0019)
        assert.match(stale.body.error.message, /approval\.ttl_minutes was shortened to 0\.005 since/)
        assert.equal([...staging.writes.values()].length, 0, 'nothing was written')
      } finally {
        await things.close()
      }
    })
  })
}
