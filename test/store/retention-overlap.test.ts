import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import type { KyselyPlugin, PluginTransformQueryArgs, PluginTransformResultArgs, QueryResult, RootOperationNode, UnknownRow } from 'kysely'
import { PRUNE_ACTION, sweepRetention, type Gateway } from '../../src/gateway/index.js'
import type { PruneReport } from '../../src/selections/index.js'
import { demoGatewayFor } from '../support/gateway-fixture.js'
import { STORE_KINDS } from '../support/stores.js'

/**
 * Two retention sweeps at once on one store (the schedule's and a `warrant store prune`, or two gateways on one
 * PostgreSQL database): the second one started while the first was deleting a selection's rows found that selection's
 * journal entry and "finished" it too, so both sweeps listed it and both audit rows named it. A sweep claims the
 * journal entries it works on; an entry another running sweep holds is left to it. Every selection is listed, and
 * audited, by exactly one sweep, and the rows counted add up to the rows there were.
 */
const DAY = 86_400_000
const LONG_AGO = '2001-01-01T00:00:00.000Z'

/** Calls `onFirst` once, at the first DELETE of member rows the plugged-in database sends. */
function atFirstMemberDelete(onFirst: () => void): KyselyPlugin {
  let seen = false
  return {
    transformQuery(args: PluginTransformQueryArgs): RootOperationNode {
      if (!seen && args.node.kind === 'DeleteQueryNode' && JSON.stringify(args.node).includes('"selection_members"')) {
        seen = true
        onFirst()
      }
      return args.node
    },
    async transformResult(args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
      return args.result
    },
  }
}

for (const kind of STORE_KINDS) {
  describe(`overlapping retention sweeps list and audit each selection once (${kind} store)`, () => {
    const env = demoGatewayFor({ store: kind, count: 200 })

    test('a sweep started while another deletes a selection leaves that selection to it', { timeout: 120_000 }, async () => {
      const { fx } = env
      const db = fx.gateway.store.db
      const ids: string[] = []
      for (const status of ['past_due', 'active', 'canceled', 'trialing']) {
        const made = await fx.as('agent')('POST', '/v1/resources/subscriptions/selections', { filter: { status } })
        assert.equal(made.status, 201, JSON.stringify(made.body))
        ids.push(made.body.selection_id)
      }
      await db.updateTable('selections').set({ expires_at: LONG_AGO }).where('id', 'in', ids).execute()
      const memberRows = async () => Number((await db.selectFrom('selection_members').select((eb) => eb.fn.countAll().as('n')).where('selection_id', 'in', ids).executeTakeFirstOrThrow()).n)
      const before = await memberRows()
      const sweep = (g: Pick<Gateway, 'store' | 'audit'>) => sweepRetention(g, { olderThanMs: 30 * DAY, dryRun: false, actor: null, surface: 'cli', batchRows: 3 })

      let second: Promise<PruneReport> | null = null
      const watched = { store: { ...fx.gateway.store, db: db.withPlugin(atFirstMemberDelete(() => (second = sweep(fx.gateway)))) }, audit: fx.gateway.audit }
      const a = await sweep(watched)
      assert.ok(second !== null, 'the second sweep started while the first deleted')
      const b = await (second as Promise<PruneReport>)

      const listed = [a, b].flatMap((r) => [...r.pruned, ...r.finished].map((p) => p.selection_id))
      assert.deepEqual([...listed].sort(), [...ids].sort(), `each selection listed by exactly one sweep: a ${JSON.stringify([a.pruned, a.finished])} b ${JSON.stringify([b.pruned, b.finished])}`)
      const counted = [a, b].flatMap((r) => [...r.pruned, ...r.finished]).reduce((n, p) => n + p.members, 0)
      assert.equal(counted, before, 'the rows counted are the rows there were')
      assert.equal(await memberRows(), 0, 'every row is gone')

      const audit = await db.selectFrom('audit_events').select('details').where('action', '=', PRUNE_ACTION).execute()
      const audited = audit.flatMap((row) => {
        const details = JSON.parse(row.details!) as { pruned: { selection_id: string }[]; finished: { selection_id: string }[] }
        return [...details.pruned, ...details.finished].map((p) => p.selection_id)
      })
      assert.deepEqual([...audited].sort(), [...ids].sort(), 'each selection in exactly one audit row')
      const left = await db.selectFrom('kv').select('key').where('key', 'like', 'retention_pruning:%').execute()
      assert.deepEqual(left, [], 'no journal entry left behind')
    })

    test("another sweep's live claim is left to it; a stale one (that sweep died) is taken and finished", async () => {
      const { fx } = env
      const db = fx.gateway.store.db
      const made = await fx.as('agent')('POST', '/v1/resources/subscriptions/selections', { filter: { region: 'eu' } })
      assert.equal(made.status, 201, JSON.stringify(made.body))
      const id: string = made.body.selection_id
      await db.updateTable('selections').set({ expires_at: LONG_AGO, members_pruned_at: LONG_AGO }).where('id', '=', id).execute()
      const claimedAt = async (at: string) =>
        db.updateTable('kv').set({ value: JSON.stringify({ sweep: 'another-gateway', at }) }).where('key', '=', `retention_pruning:${id}`).execute()
      await db.insertInto('kv').values({ key: `retention_pruning:${id}`, value: '' }).execute()
      const sweep = () => sweepRetention(fx.gateway, { olderThanMs: 30 * DAY, dryRun: false, actor: null, surface: 'cli', batchRows: 10 })
      const rows = async () => Number((await db.selectFrom('selection_members').select((eb) => eb.fn.countAll().as('n')).where('selection_id', '=', id).executeTakeFirstOrThrow()).n)

      await claimedAt(fx.gateway.store.now())
      const live = await sweep()
      assert.deepEqual(live.finished, [], 'held by a live sweep: not finished here')
      assert.equal(await rows(), made.body.count)

      await claimedAt(new Date(Date.now() - 6 * 60_000).toISOString())
      const stale = await sweep()
      assert.deepEqual(stale.finished.map((f) => [f.selection_id, f.members]), [[id, made.body.count]])
      assert.equal(await rows(), 0)
    })
  })
}
