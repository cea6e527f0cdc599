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

  })
}
