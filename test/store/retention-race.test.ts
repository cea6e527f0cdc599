import assert from 'node:assert/strict'
import { after, describe, test } from 'node:test'
import Database from 'better-sqlite3'
import { CompiledQuery, sql, type KyselyPlugin, type PluginTransformQueryArgs, type PluginTransformResultArgs, type QueryId, type QueryResult, type RootOperationNode, type UnknownRow } from 'kysely'
import { pruneExpiredMembers } from '../../src/selections/index.js'
import { demoGatewayFor } from '../support/gateway-fixture.js'
import { STORE_KINDS } from '../support/stores.js'
import { until } from '../support/until.js'

/**
 * Two sweeps on one PostgreSQL store left 1,044 member rows of a pruned selection behind (seen in CI): the sweep that
 * journaled a selection first but lost the mark to another deleted rows alongside the marker, and the marker's batch
 * whose rows had just been deleted deleted none, which it took for "no rows left". The sweep that did not mark now lets
 * go of its entry, and a batch that deletes nothing ends a selection only when no row of it is left.
 */
const DAY = 86_400_000
const LONG_AGO = '2001-01-01T00:00:00.000Z'

/** After the statement `matches` picks out has run, awaits `then` before the sweep goes on. */
function afterStatement(matches: (tree: string) => boolean, then: () => Promise<void>): KyselyPlugin {
  const picked = new Set<QueryId>()
  return {
    transformQuery(args: PluginTransformQueryArgs): RootOperationNode {
      if (matches(JSON.stringify(args.node))) picked.add(args.queryId)
      return args.node
    },
    async transformResult(args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
      if (picked.delete(args.queryId)) await then()
      return args.result
    },
  }
}

for (const kind of STORE_KINDS) {
  describe(`a retention sweep racing another for one selection leaves no row behind (${kind} store)`, () => {
    const env = demoGatewayFor({ store: kind, count: 300 })
    const expired = async (filter: object) => {
      const made = await env.fx.as('agent')('POST', '/v1/resources/subscriptions/selections', { filter })
      assert.equal(made.status, 201, JSON.stringify(made.body))
      await env.fx.gateway.store.db.updateTable('selections').set({ expires_at: LONG_AGO }).where('id', '=', made.body.selection_id).execute()
      return made.body.selection_id as string
    }
    const rows = async (id: string) =>
      Number((await env.fx.gateway.store.db.selectFrom('selection_members').select((eb) => eb.fn.countAll().as('n')).where('selection_id', '=', id).executeTakeFirstOrThrow()).n)
    // another sweep's statements, sent between two of the sweep's own: on SQLite through a connection of its own (the
    // store's one connection is the sweep's while a statement's result is handed back)
    let side: Database.Database | undefined
    const otherWrites = async (text: string, params: readonly unknown[]) => {
      if (kind === 'sqlite') {
        side ??= new Database(env.fx.storeUrl.slice('sqlite:'.length))
        side.prepare(text).run(...params)
      } else {
        let n = 0
        await env.fx.gateway.store.db.executeQuery(CompiledQuery.raw(text.replace(/\?/g, () => `$${++n}`), [...params]))
      }
    }
    after(() => side?.close())
    const options = () => ({ olderThanMs: 30 * DAY, dryRun: false, nowIso: () => env.fx.gateway.store.now(), batchRows: 5 })

    test('journaled first, marked by another sweep: the entry is let go, no row deleted here, the marker takes it', async () => {
      const db = env.fx.gateway.store.db
      const id = await expired({ status: 'canceled' })
      const before = await rows(id)
      const key = `retention_pruning:${id}`
      const marker = JSON.stringify({ sweep: 'the-marking-sweep', at: env.fx.gateway.store.now() })
      // right after this sweep journals the selection, another sweep marks it and takes the entry as its own (its `own`)
      const other = afterStatement(
        (tree) => tree.includes('"InsertQueryNode"') && tree.includes('"kv"') && tree.includes('retention_pruning:'),
        async () => {
          await otherWrites('update selections set members_pruned_at = ? where id = ?', [LONG_AGO, id])
          await otherWrites('update kv set value = ? where key = ?', [marker, key])
        },
      )
      const report = await pruneExpiredMembers(db.withPlugin(other), options())
      assert.deepEqual([report.pruned, report.finished], [[], []], 'listed by neither: the marking sweep lists it')
      assert.equal(await rows(id), before, 'no row deleted here: the marking sweep deletes them')
      assert.equal((await db.selectFrom('kv').select('value').where('key', '=', key).executeTakeFirst())?.value, marker, "the marker's entry is left as it is")
      await db.deleteFrom('kv').where('key', '=', key).execute()
      await db.deleteFrom('selection_members').where('selection_id', '=', id).execute()
    })

    test('journaled first, marked by another that died before taking the entry: the next sweep finishes it', async () => {
      const db = env.fx.gateway.store.db
      const id = await expired({ status: 'past_due' })
      const before = await rows(id)
      const died = afterStatement(
        (tree) => tree.includes('"InsertQueryNode"') && tree.includes('"kv"') && tree.includes('retention_pruning:'),
        () => otherWrites('update selections set members_pruned_at = ? where id = ?', [LONG_AGO, id]),
      )
      const first = await pruneExpiredMembers(db.withPlugin(died), options())
      assert.deepEqual([first.pruned, first.finished], [[], []])
      const next = await pruneExpiredMembers(db, options())
      assert.deepEqual(next.finished.map((f) => [f.selection_id, f.members]), [[id, before]], 'the released entry is finished at once')
      assert.equal(await rows(id), 0)
    })

    test('a batch whose rows another transaction deleted first deletes none: the sweep goes on to the rows left', { skip: kind !== 'postgres' && 'SQLite runs one writer at a time' }, async () => {
      const db = env.fx.gateway.store.db
      const id = await expired({ status: 'active' })
      const before = await rows(id)
      assert.ok(before > 10, `${before} rows`)
      let report: Awaited<ReturnType<typeof pruneExpiredMembers>> | undefined
      await db.connection().execute(async (conn) => {
        await sql`begin`.execute(conn)
        // the lowest 5 places, as the sweep's first batch picks them: deleted here, not committed yet
        await sql`delete from selection_members where selection_id = ${id} and ord in (select ord from selection_members where selection_id = ${id} order by ord limit 5)`.execute(conn)
        const sweeping = pruneExpiredMembers(db, options())
        const waiting = async () =>
          Number((await sql<{ n: string }>`select count(*) as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'`.execute(db)).rows[0]!.n) > 0
        await until(waiting, "the sweep's first batch waiting on those rows")
        await sql`commit`.execute(conn)
        report = await sweeping
      })
      assert.equal(await rows(id), 0, 'every row is gone')
      assert.deepEqual(report!.pruned.map((p) => [p.selection_id, p.members]), [[id, before - 5]], 'the rows it deleted, counted')
    })
  })
}
