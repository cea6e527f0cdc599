import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { STORE_KINDS } from '../support/stores.js'
import { allResults } from './support/flow.js'
import { userIdOf } from './support/users-upstream.js'
import { withFaultGateway } from './support/fault-gateway.js'

/**
 * The write lands upstream, but what the gateway sees after it is the record as it was: a re-read served by a
 * lagging replica, or an answer body holding the old record. Before, the target was recorded `failed`
 * (effect_contradicted), which nothing revisits (reconcile reads unknown targets, compensation succeeded ones):
 * an approved change landed and the ledger said it failed. A record still at the version the write started from
 * cannot tell "not applied" from "not visible yet": `unknown`, the operation halted, settled by reconcile.
 */
for (const kind of STORE_KINDS) describe(`answer races (${kind} store)`, () => {
  const scenarios: Record<string, (u: any) => void> = {
    '200 with an empty body, replica lag on the re-read': (u) => {
      let lag: any = null
      u.onRead = (id: string) => (id === userIdOf(1) ? lag : undefined)
      u.onWrite = (t: any) => { lag = t.id === userIdOf(1) ? { ...t.before } : null; t.apply(); t.send(200) }
    },
    '200 with a stale body (the record as it was)': (u) => (u.onWrite = (t: any) => { t.apply(); t.send(200, t.before) }),
  }
  for (const [name, arrange] of Object.entries(scenarios)) {
    test(name, () =>
      withFaultGateway(kind, 1, { concurrency: 1, batch_size: 10 }, async ({ upstream, agent, commit, finished }) => {
        // the hooks only act on writes, and on reads after the first write: arranged before the commit
        arrange(upstream)
        const id = await commit(`race-${name}`)
        const op = await finished(id)
        const [r] = await allResults(agent, id)
        assert.equal(upstream.users.get(userIdOf(1))!.role, 'viewer', 'the write landed upstream')
        assert.equal(upstream.writeLog.length, 1, 'sent once')
        assert.notEqual(r.outcome ?? r.state, 'failed', `the write landed, yet the target is failed: ${JSON.stringify(r)} / op ${op.state}`)
        assert.notEqual(r.outcome ?? r.state, 'skipped', `the write landed, yet the target is skipped ("nothing was written"): ${JSON.stringify(r)}`)
        // once the replica caught up, a reconciliation must be able to tell (it only looks at unknown targets)
        upstream.onRead = () => undefined
        const rec = await agent('POST', `/v1/operations/${id}/reconcile`)
        assert.equal(rec.status, 200)
        const [after] = await allResults(agent, id)
        assert.equal(after.outcome, 'succeeded', `after reconcile, with the write visible upstream: ${JSON.stringify(after)}`)
      }),
    )
  }
})
