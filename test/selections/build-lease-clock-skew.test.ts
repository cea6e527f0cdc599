import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { sql } from 'kysely'
import { keepBuilding } from '../../src/selections/build-lease.js'
import type { SelectionContext } from '../../src/selections/context.js'
import { insertForeignBuildingSelection } from '../support/building-selection.js'
import { type GatewayFixture, startDemoGateway } from '../support/gateway-fixture.js'

/**
 * A selection's builder on another machine renews its lease while it walks; the others reap the build once that
 * lease has ended. Judged on each process's clock, a builder whose clock ran a minute behind renewed its lease into
 * everyone else's past: the next sweep marked its live walk failed and removed its members. On PostgreSQL the lease
 * is now written and judged on the database's clock. (SQLite is one machine, one clock: not run there.)
 */
const BUILD_LEASE_MS = 600
// a builder of another host: nothing proves it alive or dead but its lease
const REMOTE_BUILDER = 'web-2@elsewhere.example:4242:abcdef:0:1'

describe('a selection builder whose clock runs a minute behind, on a PostgreSQL store', () => {
  let fx: GatewayFixture
  before(async () => {
    fx = await startDemoGateway({ store: 'postgres', count: 20 })
  })
  after(async () => {
    await fx?.close()
  })

  const row = async (id: string) =>
    fx.gateway.store.db
      .selectFrom('selections')
      .select(['state', 'failure', 'lease_until', sql<string>`(extract(epoch from now()) * 1000)::float8`.as('db_now')])
      .where('id', '=', id)
      .executeTakeFirstOrThrow()

  test('keeps its build while it renews; once it stops, its lease still ends and the build is reaped', async () => {
    const store = fx.gateway.store
    await insertForeignBuildingSelection(store, 'sel_behind', { createdBy: null, origin: null, builder: REMOTE_BUILDER, leaseUntil: new Date(Date.now() + BUILD_LEASE_MS).toISOString() })
    // what keepBuilding reads of the builder's selection service: its store, clock, lease and name
    const behind = { store, db: store.db, clock: () => new Date(Date.now() - 60_000), buildLeaseMs: BUILD_LEASE_MS, owner: REMOTE_BUILDER } as unknown as SelectionContext
    const lease = keepBuilding(behind, 'sel_behind')
    try {
      await new Promise((r) => setTimeout(r, 2 * BUILD_LEASE_MS))
      const held = await row('sel_behind')
      const ahead = Date.parse(held.lease_until!) - Number(held.db_now)
      assert.ok(ahead > 0 && ahead <= BUILD_LEASE_MS, `the renewed lease ends ${ahead} ms after the store's now`)
      assert.deepEqual(await fx.gateway.selections.reapAbandoned(), [], 'a build whose lease is renewed is not reaped')
      assert.equal((await row('sel_behind')).state, 'building')
      assert.equal(lease.lost.aborted, false)
    } finally {
      lease.stop()
    }
    await new Promise((r) => setTimeout(r, BUILD_LEASE_MS + 100))
    assert.deepEqual(await fx.gateway.selections.reapAbandoned(), ['sel_behind'])
    assert.match((await row('sel_behind')).failure!, /stopped renewing its lease/)
  })
})
