import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import type { Filter } from '../../../src/contract/index.js'
import type { SqlConnector } from '../../../src/connectors/sql/index.js'
import { createCursorCodec, searchAll } from '../../../src/inventory/index.js'
import { createUpstream, ledgerConnector, type Upstream } from './support/upstream.js'

/**
 * A field declared `string` over a column of numbers (a postcode or an account number kept as an integer). The
 * record shows "2134"; the engine compared the column as numbers: SQLite gave the filter's "02134" the column's
 * numeric affinity and matched 2134, and in a column of no type found integer 2134 unequal to "2134";
 * PostgreSQL read "02134" as 2134; `lt: "3"` compared 10 with 3. Such a column is now compared as the text a
 * record shows, as the rules Warrant evaluates in memory compare it.
 */
const TABLE = {
  sqlite: 'create table ledger (id text primary key, version integer not null, code integer, ref)',
  postgres: 'create table ledger (id text primary key, version integer not null, code integer, ref text)',
} as const

const scope = { resource: 'ledger', environment: 'test', visibility: 'all', restricted: false }
const codec = createCursorCodec({ key: 'k'.repeat(32) })

for (const kind of ['sqlite', 'postgres'] as const) {
  describe(`sql on ${kind}: a string field over a column of numbers`, () => {
    let upstream: Upstream
    let connector: SqlConnector
    before(async () => {
      upstream = await createUpstream(kind)
      await upstream.exec(TABLE[kind])
      for (const [id, code] of [['a', 2134], ['b', 10], ['c', 25], ['d', 400]] as const) await upstream.exec(`insert into ledger (id, version, code, ref) values ('${id}', 1, ${code}, ${code})`)
      connector = ledgerConnector(upstream.url, { id: 'string', version: 'integer', code: 'string', ref: 'string' })
    })
    after(async () => {
      await connector?.close()
      await upstream?.drop()
    })

    const ids = async (filter: Filter) => {
      const envelope = await searchAll(connector, { resource: 'ledger', filter, pageSize: 10 }, {}, { scope, cursorCodec: codec })
      assert.equal(envelope.complete, true, JSON.stringify(envelope.incomplete_reasons))
      return envelope.items.map((r) => r.id)
    }

    it('equality is on the text a record shows', async () => {
      assert.deepEqual(await ids({ code: '02134' }), [])
      assert.deepEqual(await ids({ code: '2134' }), ['a'])
      assert.deepEqual(await ids({ code: { in: ['10', '0025'] } }), ['b'])
      assert.deepEqual(await ids({ ref: '2134' }), ['a'])
    })

    it('order is code-point order, as for every string', async () => {
      assert.deepEqual(await ids({ code: { lt: '3' } }), ['a', 'b', 'c'])
      assert.deepEqual(await ids({ code: { gte: '3' } }), ['d'])
    })
  })
}
