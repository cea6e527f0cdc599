import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import type { SourceRecord } from '../../../src/connectors/connector.js'
import type { Filter } from '../../../src/contract/index.js'
import type { SqlConnector } from '../../../src/connectors/sql/index.js'
import { createUpstream, ledgerConnector, type Upstream } from './support/upstream.js'

/** Stored decimal → what a record shows: a number where a double holds that decimal, else its exact digits. */
const AMOUNTS: readonly [string, number | string][] = [
  ['1.10', 1.1],
  ['100.00', 100],
  ['-0.50', -0.5],
  ['123456789012345.67', 123456789012345.67],
  ['12345678901234567.89', '12345678901234567.89'],
  ['3.1415926535897932384', '3.1415926535897932384'],
  ['99999999999999999999', '99999999999999999999'],
]

const TABLE = {
  postgres: 'create table ledger (id text primary key, version integer not null, amount numeric(40, 19))',
  mysql: 'create table ledger (id varchar(20) primary key, version int not null, amount decimal(40, 19))',
} as const

/**
 * A money column wider than a double (PostgreSQL `numeric`, MySQL `DECIMAL`), declared `number`: both engines
 * hand the value over as text, and a record used to show `Number(text)`: 12345678901234567.89 read as
 * 12345678901234568, a value the row never held, on the page a reviewer approves. A decimal a number holds is a
 * number; one it would round is kept as its exact digits (PostgreSQL's trailing zeros of the scale aside).
 */
for (const kind of ['postgres', 'mysql'] as const) {
  describe(`sql connector on ${kind}: decimals wider than a double`, () => {
    let upstream: Upstream
    let connector: SqlConnector
    before(async () => {
      upstream = await createUpstream(kind)
      await upstream.exec(TABLE[kind])
      for (const [i, [amount]] of AMOUNTS.entries()) await upstream.exec(`insert into ledger (id, version, amount) values ('r${i}', 1, ${amount})`)
      connector = ledgerConnector(upstream.url, { id: 'string', version: 'integer', amount: 'number' })
    })
    after(async () => {
      await connector?.close()
      await upstream?.drop()
    })

    it('a walk shows each amount as stored: a number where one holds it, else the exact digits', async () => {
      const session = await connector.openSession()
      let records: SourceRecord[] = []
      try {
        const page = await session.readPage({ source: 'ledger-db', filter: {}, position: null, pageSize: 100 })
        assert.equal(page.kind, 'page', JSON.stringify(page))
        if (page.kind === 'page') records = [...page.items]
      } finally {
        await session.close()
      }
      const shown = new Map(records.map((r) => [r.id, r.fields.amount]))
      for (const [i, [stored, expected]] of AMOUNTS.entries()) {
        const value = shown.get(`r${i}`)
        if (typeof expected === 'number') assert.equal(value, expected, `${stored}`)
        // the engine may pad the scale with zeros; the digits that matter are all there
        else assert.equal(typeof value === 'string' ? value.replace(/\.?0+$/, '') : value, expected, `${stored}`)
      }
    })

    it("a filter compares the column's exact decimal with the filter's number, as the rules in memory do", async () => {
      // r4 holds 12345678901234567.89; the filter's number is the double 12345678901234568, above it
      const ids = async (filter: Filter) => {
        const session = await connector.openSession()
        try {
          const page = await session.readPage({ source: 'ledger-db', filter, position: null, pageSize: 100 })
          assert.equal(page.kind, 'page', JSON.stringify(page))
          return page.kind === 'page' ? page.items.map((r) => r.id) : []
        } finally {
          await session.close()
        }
      }
      const above = { amount: { gte: 12345678901234568 } }
      const below = { amount: { lt: 12345678901234568 } }
      assert.deepEqual(await ids(above), ['r6'])
      assert.ok((await ids(below)).includes('r4'))
      assert.deepEqual(await ids({ amount: 12345678901234568 }), [])
      // the same records as the rules Warrant evaluates in memory (exclusions, flags, preconditions)
      const shown = (await ids({})).length
      assert.equal(shown, AMOUNTS.length)
    })
  })
}
