import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import type { KyselyPlugin, PluginTransformQueryArgs, PluginTransformResultArgs, QueryResult, RootOperationNode, UnknownRow } from 'kysely'
import { pruneExpiredMembers } from '../../src/selections/index.js'
import { demoGatewayFor } from '../support/gateway-fixture.js'
import { STORE_KINDS } from '../support/stores.js'

/**
 * A sweep cut after it marked a selection (marked pruned, rows left) is finished by the next sweep; finishing costs
 * nothing per selection already finished: a sweep with nothing new reads no member or exclusion table at all (it used
 * to re-scan every pruned selection, a query that grew with the whole pruning history).
 */
const DAY = 86_400_000
const LONG_AGO = '2001-01-01T00:00:00.000Z'

/** Records every statement's tree; throws on the `failOnDelete`-th DELETE of member rows (a crash mid-sweep). */
function statements(failOnDelete = 0): KyselyPlugin & { readonly seen: string[] } {
  const seen: string[] = []
  let deletes = 0
  return {
    seen,
    transformQuery(args: PluginTransformQueryArgs): RootOperationNode {
      const tree = JSON.stringify(args.node)
      seen.push(tree)
      if (args.node.kind === 'DeleteQueryNode' && tree.includes('"selection_members"') && ++deletes === failOnDelete) throw new Error('the sweep was cut here')
      return args.node
    },
    async transformResult(args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
      return args.result
    },
  }
}

for (const kind of STORE_KINDS) {
  describe(`an interrupted retention sweep is finished, finished ones are not visited again (${kind} store)`, () => {
    const env = demoGatewayFor({ store: kind, count: 120 })

    test('marked-but-not-deleted is finished by the next sweep; a sweep with nothing new touches no member rows', async () => {
      const { fx } = env
      const agent = fx.as('agent')
      const db = fx.gateway.store.db
      const ids: string[] = []
      for (const status of ['past_due', 'active', 'canceled']) {
        const made = await agent('POST', '/v1/resources/subscriptions/selections', { filter: { status } })
        assert.equal(made.status, 201, JSON.stringify(made.body))
        ids.push(made.body.selection_id)
      }
      await db.updateTable('selections').set({ expires_at: LONG_AGO }).where('id', 'in', ids).execute()
      const rows = async (id: string) => Number((await db.selectFrom('selection_members').select((eb) => eb.fn.countAll().as('n')).where('selection_id', '=', id).executeTakeFirstOrThrow()).n)
      const options = { olderThanMs: 30 * DAY, dryRun: false, nowIso: () => fx.gateway.store.now(), batchRows: 2 }

      // cut at a DELETE in the middle: some selection is marked with rows left
      await assert.rejects(pruneExpiredMembers(db.withPlugin(statements(2)), options), /cut here/)
      const marked = await db.selectFrom('selections').select('id').where('id', 'in', ids).where('members_pruned_at', 'is not', null).execute()
      const left = (await Promise.all(marked.map(async ({ id }) => [id, await rows(id)] as const))).filter(([, n]) => n > 0)
      assert.equal(left.length, 1, `one marked selection keeps rows after the cut: ${JSON.stringify(left)}`)

      const next = await pruneExpiredMembers(db, options)
      assert.equal(await rows(left[0]![0]), 0, 'the next sweep finished the interrupted one')
      assert.ok(next.finished.some((f) => f.selection_id === left[0]![0]), JSON.stringify(next.finished))
      for (const id of ids) assert.equal(await rows(id), 0)

      const recorder = statements()
      const idle = await pruneExpiredMembers(db.withPlugin(recorder), options)
      assert.deepEqual([idle.selections, idle.finished.length], [0, 0])
      const touching = recorder.seen.filter((s) => s.includes('"selection_members"') || s.includes('"selection_exclusions"'))
      assert.deepEqual(touching, [], 'nothing to do: no statement reads or deletes member rows of selections already finished')

      // a store whose selection the release before the journal marked, rows left: found once by a scan, and finished
      const legacy = (await agent('POST', '/v1/resources/subscriptions/selections', { filter: { status: 'trialing' } })).body
      assert.ok((await rows(legacy.selection_id)) > 0)
      await db.updateTable('selections').set({ members_pruned_at: LONG_AGO }).where('id', '=', legacy.selection_id).execute()
      await db.deleteFrom('kv').where('key', '=', 'retention_unjournaled_checked').execute()
      const upgraded = await pruneExpiredMembers(db, options)
      assert.deepEqual(upgraded.finished.map((f) => f.selection_id), [legacy.selection_id])
      assert.equal(await rows(legacy.selection_id), 0)
    })
  })
}
