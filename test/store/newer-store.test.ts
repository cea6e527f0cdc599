import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { type CliWorkspace, createCliWorkspaceOn } from '../support/cli-config.js'
import { storeMigrations } from '../../src/store/index.js'
import { STORE_KINDS } from '../support/stores.js'

/**
 * A store migrated by a newer Warrant (a migration this code does not know), opened by an older one after a
 * downgrade: every command failed with "internal error: … corrupted migrations: previously executed migration … is
 * missing (this is a bug in Warrant)", exit 1. It is no bug and nothing is corrupted: the store is newer than the
 * code. It is refused as a `conflict` (exit 3) naming the unknown migration and what to do, and nothing is written.
 */
for (const kind of STORE_KINDS)
  describe(`a store newer than the code is refused, saying so (${kind})`, () => {
    let ws: CliWorkspace
    before(async () => {
      ws = await createCliWorkspaceOn(kind, { count: 50 })
    })
    after(async () => {
      await ws?.drop()
    })

    test('every command exits 3 naming the newer migration; no audit row or selection is written', { timeout: 120_000 }, async () => {
      const first = await ws.warrant(['search', 'subscriptions', '-f', 'status=past_due'])
      assert.equal(first.code, 0, first.stderr)
      const count = (table: 'audit_events' | 'selections') =>
        ws.withStore(async (store) => Number((await store.db.selectFrom(table).select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n))
      await ws.withStore((store) => store.db.insertInto('warrant_migration' as never).values({ name: '0099_from_the_future', timestamp: new Date().toISOString() } as never).execute())
      const audited = await count('audit_events')
      for (const args of [['search', 'subscriptions', '-f', 'status=past_due'], ['select', 'subscriptions', '-f', 'status=past_due']]) {
        const run = await ws.warrant(args)
        assert.equal(run.code, 3, `${args.join(' ')}: exit ${run.code}\n${run.stderr}`)
        assert.doesNotMatch(run.stderr, /internal error|bug in Warrant|corrupted/)
        assert.match(run.stderr, /conflict/)
        assert.match(run.stderr, /migrated by a newer version of Warrant/)
        assert.match(run.stderr, /0099_from_the_future/)
        assert.match(run.stderr, new RegExp(Object.keys(storeMigrations).at(-1)!), 'names the newest migration this code knows')
      }
      assert.equal(await count('audit_events'), audited, 'nothing was written to the newer store')
      assert.equal(await count('selections'), 0)
    })
  })
