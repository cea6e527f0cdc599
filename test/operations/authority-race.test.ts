import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import BetterSqlite3 from 'better-sqlite3'
import type { KyselyPlugin, PluginTransformQueryArgs, PluginTransformResultArgs, QueryResult, RootOperationNode, UnknownRow } from 'kysely'
import pg from 'pg'
import { createLogger } from '../../src/gateway/index.js'
import { createOperationService } from '../../src/operations/index.js'
import type { PlanService } from '../../src/plans/index.js'
import { startDemoGateway } from '../support/gateway-fixture.js'
import { STORE_KINDS } from '../support/stores.js'

/**
 * A principal disabled (or a token revoked) at the same instant as a commit. The commit transaction must either see
 * the disable (and refuse) or the disable must land after it: never an operation recorded by a transaction that
 * committed after the disable of the principal whose authority it stands on (an approver's, or the committer's own).
 *
 * The instant is made certain in two places. Inside the commit transaction, right after it rechecked the approval, a
 * plugin on the operation service's store pauses and a second connection disables the principal: on PostgreSQL it
 * committed there and then (the check had already read the row), and the operation was recorded after it. Before the
 * transaction, right after `assertCommittable` passed, a wrapped plan service revokes the committer's token or disables
 * it: the commit was recorded all the same, on both stores.
 */
type Gw = Awaited<ReturnType<typeof startDemoGateway>>['gateway']
const PAUSE = { type: 'pause_collection', params: { reason: 'authority race' } }

/** Runs `deed` once, inside the commit transaction, after its approval check: when it first reads the members to record. */
function pauseInsideCommit(deed: () => Promise<void>): KyselyPlugin {
  let sawOperation = false
  let pausing: unknown = null
  return {
    transformQuery({ node, queryId }: PluginTransformQueryArgs): RootOperationNode {
      const text = JSON.stringify(node)
      if (node.kind === 'InsertQueryNode' && text.includes('"name":"operations"')) sawOperation = true
      else if (sawOperation && pausing === null && node.kind === 'SelectQueryNode' && text.includes('"name":"selection_members"')) pausing = queryId
      return node
    },
    async transformResult({ result, queryId }: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
      if (pausing === queryId) {
        pausing = undefined
        await deed()
      }
      return result
    },
  }
}

/**
 * Disables a principal through a connection of its own, as another process would; resolves when that committed, with
 * whether the plan's operation was already recorded as the disable's own transaction saw it. That is the order the
 * two transactions serialized in, read from the store itself rather than from when promises resolve in this process
 * (the commit's work after its transaction, the audit and the runner, can outlast a disable that waited for it).
 */
function disabler(gw: Gw, storeUrl: string): (principal: string, planId: string) => Promise<{ operationRecorded: boolean }> {
  if (gw.store.dialect === 'postgres')
    return async (principal, planId) => {
      const client = new pg.Client({ connectionString: storeUrl })
      await client.connect()
      try {
        await client.query('begin')
        // waits here while the commit holds the principal's row; the next statement then reads what committed before
        await client.query('update principals set disabled_at = $1 where id = $2', [new Date().toISOString(), principal])
        const seen = await client.query('select count(*)::int as n from operations where plan_id = $1', [planId])
        await client.query('commit')
        return { operationRecorded: seen.rows[0].n > 0 }
      } catch (error) {
        await client.query('rollback').catch(() => undefined)
        throw error
      } finally {
        await client.end()
      }
    }
  // SQLite: another connection to the file, waiting for the write lock as another process's would (without blocking
  // this process's event loop: it tries again every 20 ms)
  return async (principal, planId) => {
    const other = new BetterSqlite3(storeUrl.replace(/^sqlite:/, ''))
    other.pragma('busy_timeout = 0')
    const disableAndLook = other.transaction(() => {
      other.prepare('update principals set disabled_at = ? where id = ?').run(new Date().toISOString(), principal)
      const seen = other.prepare('select count(*) as n from operations where plan_id = ?').get(planId) as { n: number }
      return { operationRecorded: seen.n > 0 }
    })
    try {
      for (;;) {
        try {
          return disableAndLook.immediate()
        } catch (error) {
          if ((error as { code?: string }).code !== 'SQLITE_BUSY') throw error
          await new Promise((r) => setTimeout(r, 20))
        }
      }
    } finally {
      other.close()
    }
  }
}

/** An agent of its own (its token to revoke), and a plan of its approved by the fixture's reviewer. */
async function approvedPlan(fx: Awaited<ReturnType<typeof startDemoGateway>>, region: string) {
  const gw = fx.gateway
  const issued = await gw.principals.issue({ name: 'race-agent', role: 'agent', scopes: { resources: ['subscriptions'], actions: '*' } })
  const agent = await gw.principals.authenticate(issued.token, 'http')
  const reviewer = await gw.principals.authenticate(fx.tokens.reviewer, 'http')
  const selection = await gw.selections.create(agent, 'subscriptions', { filter: { status: 'past_due', region } })
  const plan = await gw.plans.propose(agent, selection.selection_id, { action: PAUSE })
  await gw.plans.decide(reviewer, plan.plan_id, { decision: 'approve', expected_plan_digest: plan.plan_digest })
  return { issued, agent, reviewer, plan }
}

function operationsWith(gw: Gw, plans: PlanService, store = gw.store) {
  return createOperationService({ store, catalogue: gw.catalogue, selections: gw.selections, plans, execution: gw.config.execution, log: createLogger({ level: 'silent' }), executors: false })
}

for (const kind of STORE_KINDS) {
  describe(`a principal disabled at the same instant as a commit (${kind} store)`, () => {
    for (const who of ['approver', 'committer'] as const) {
      test(`the ${who} is disabled inside the commit transaction, after its check: the disable lands after the commit, or the commit is refused`, async () => {
        const fx = await startDemoGateway({ store: kind, count: 300, serve: false })
        try {
          const gw = fx.gateway
          const { issued, agent, reviewer, plan } = await approvedPlan(fx, 'us')
          const target = who === 'approver' ? reviewer.principal : agent.principal
          const disable = disabler(gw, fx.storeUrl)

          let disabling: Promise<{ operationRecorded: boolean }> | null = null
          const plugin = pauseInsideCommit(async () => {
            disabling = disable(target, plan.plan_id)
            // long enough for a disable that does not wait for the commit to commit
            await Promise.race([disabling, new Promise((r) => setTimeout(r, 700))])
          })
          const operations = operationsWith(gw, gw.plans, { ...gw.store, db: gw.store.db.withPlugin(plugin) })
          let outcome: 'committed' | 'refused'
          try {
            await operations.commitPlan(agent, plan.plan_id, { idempotencyKey: `race-${who}-${kind}`, expectedDigest: plan.plan_digest })
            outcome = 'committed'
          } catch (error) {
            outcome = 'refused'
            assert.ok(['not_approved', 'unauthenticated'].includes((error as { code?: string }).code ?? ''), String(error))
          } finally {
            await operations.close()
          }
          assert.ok(disabling, 'the disable was attempted inside the commit transaction')
          const { operationRecorded } = await (disabling as Promise<{ operationRecorded: boolean }>)
          const ops = await gw.store.db.selectFrom('operations').select('id').where('plan_id', '=', plan.plan_id).execute()
          assert.equal(ops.length, outcome === 'committed' ? 1 : 0)
          assert.ok(
            !(outcome === 'committed' && !operationRecorded),
            `the operation was recorded by a transaction that committed after the ${who} was disabled`,
          )
          const row = await gw.store.db.selectFrom('principals').select('disabled_at').where('id', '=', target).executeTakeFirstOrThrow()
          assert.ok(row.disabled_at, 'the disable landed')
        } finally {
          await fx.close()
        }
      })
    }

    const deeds = [
      { name: "the committer's token is revoked", deed: async (gw: Gw, tokenId: string) => gw.principals.revoke(tokenId) },
      {
        name: 'the committer is disabled',
        deed: async (gw: Gw, _tokenId: string, principal: string) => void (await gw.store.db.updateTable('principals').set({ disabled_at: gw.store.now() }).where('id', '=', principal).execute()),
      },
    ]
    for (const { name, deed } of deeds) {
      test(`${name} between the commit's check and its transaction: refused, nothing recorded`, async () => {
        const fx = await startDemoGateway({ store: kind, count: 300, serve: false })
        try {
          const gw = fx.gateway
          const { issued, agent, reviewer, plan } = await approvedPlan(fx, 'eu')
          const plans: PlanService = {
            ...gw.plans,
            async assertCommittable(actor, planId, expected) {
              const committable = await gw.plans.assertCommittable(actor, planId, expected)
              await deed(gw, issued.token_id, issued.principal_id)
              return committable
            },
          }
          const operations = operationsWith(gw, plans)
          try {
            await assert.rejects(operations.commitPlan(agent, plan.plan_id, { idempotencyKey: `late-${kind}`, expectedDigest: plan.plan_digest }), (e: any) => {
              assert.equal(e.code, 'unauthenticated', String(e))
              assert.match(e.message, /nothing was committed/)
              return true
            })
          } finally {
            await operations.close()
          }
          const ops = await gw.store.db.selectFrom('operations').select('id').where('plan_id', '=', plan.plan_id).execute()
          assert.deepEqual(ops, [])
          assert.notEqual((await gw.store.db.selectFrom('plans').select('state').where('id', '=', plan.plan_id).executeTakeFirstOrThrow()).state, 'committed')
        } finally {
          await fx.close()
        }
      })
    }
  })
}
