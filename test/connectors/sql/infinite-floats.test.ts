import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import type { SqlConnector } from '../../../src/connectors/sql/index.js'
import { createCursorCodec, searchAll } from '../../../src/inventory/index.js'
import { createUpstream, ledgerConnector, type Upstream } from './support/upstream.js'

/**
 * A float column holds what no JSON number carries: SQLite keeps Infinity (9e999 overflows to it), PostgreSQL's
 * float8 keeps 'Infinity', '-Infinity' and 'NaN'. They were judged as numbers (a filter amount > 100 matched
 * Infinity) and then shown, frozen and reviewed as null, a value no row held, with the walk called complete.
 * Such a record is now not judged: counted and named, the walk not complete.
 */
const scope = { resource: 'ledger', environment: 'test', visibility: 'all', restricted: false }
const codec = createCursorCodec({ key: 'k'.repeat(32) })

const SETUP = {
  sqlite: {
    table: 'create table ledger (id text primary key, version integer not null, amount real)',
    rows: [`'a', 1, 9e999`, `'b', 1, -9e999`, `'c', 1, 5`, `'d', 1, 500`],
    infinite: ['a', 'b'],
    // -Infinity is not above 100: the query leaves it out, rightly
    aboveHundred: 1,
  },
  postgres: {
    table: 'create table ledger (id text primary key, version integer not null, amount float8)',
    rows: [`'a', 1, 'Infinity'`, `'b', 1, '-Infinity'`, `'c', 1, 5`, `'d', 1, 500`, `'e', 1, 'NaN'`],
    infinite: ['a', 'b', 'e'],
    // PostgreSQL orders NaN above every number
    aboveHundred: 2,
  },
} as const

for (const kind of ['sqlite', 'postgres'] as const) {
  describe(`sql on ${kind}: a float column holding Infinity or NaN`, () => {
    let upstream: Upstream
    let connector: SqlConnector
    before(async () => {
      upstream = await createUpstream(kind)
      await upstream.exec(SETUP[kind].table)
      for (const row of SETUP[kind].rows) await upstream.exec(`insert into ledger (id, version, amount) values (${row})`)
      connector = ledgerConnector(upstream.url, { id: 'string', version: 'integer', amount: 'number' })
    })
    after(async () => {
      await connector?.close()
      await upstream?.drop()
    })

    it('a search judges only the finite amounts and says the others could not be judged', async () => {
      const envelope = await searchAll(connector, { resource: 'ledger', filter: { amount: { gt: 100 } }, pageSize: 2 }, {}, { scope, cursorCodec: codec })
      assert.deepEqual(
        envelope.items.map((r) => [r.id, r.fields.amount]),
        [['d', 500]],
      )
      assert.equal(envelope.complete, false)
      const reason = envelope.incomplete_reasons.find((r) => r.code === 'SHAPE_MISMATCH') as { record_count?: number; message: string } | undefined
      assert.equal(reason?.record_count, SETUP[kind].aboveHundred, JSON.stringify(envelope.incomplete_reasons))
    })

    it('a read by id of such a row fails, saying why, rather than answering null', async () => {
      const read = await connector.readByIds([...SETUP[kind].infinite, 'c'])
      assert.deepEqual([...read.records.keys()], ['c'])
      assert.deepEqual(read.failed.map((f) => f.id).sort(), [...SETUP[kind].infinite])
      for (const failure of read.failed) assert.match(failure.message, /"amount" as another type than number;.*Infinity or NaN is no number JSON carries/)
    })
  })
}
