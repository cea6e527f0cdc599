import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import type { Filter } from '../../../src/contract/index.js'
import type { SqlConnector } from '../../../src/connectors/sql/index.js'
import { createCursorCodec, searchAll } from '../../../src/inventory/index.js'
import { createUpstream, ledgerConnector, type Upstream } from './support/upstream.js'

/**
 * SQLite keeps any value in any column: "N/A" in a REAL column, "yes" in an INTEGER flag, text that is no JSON in
 * a tags column (a table imported from a spreadsheet). SQLite orders text above every number, so `amount >= 4900`
 * matched "N/A" and "" (shown as 0), `amount < 10` left them out while the search said complete, and a tags
 * filter failed the whole walk on the first malformed list. Such records are now counted and named as not
 * judged (the walk is not complete), and numerals kept as text in an untyped column compare as numbers.
 */
const scope = { resource: 'ledger', environment: 'test', visibility: 'all', restricted: false }
const codec = createCursorCodec({ key: 'k'.repeat(32) })

describe('sql on SQLite: values of another type than their column', () => {
  let upstream: Upstream
  let connector: SqlConnector
  let loose: SqlConnector
  before(async () => {
    upstream = await createUpstream('sqlite')
    await upstream.exec('create table ledger (id text primary key, version integer not null, amount real, flag integer, tags text, raw)')
    for (const row of [
      `'a', 1, 5, 1, '["x"]', '500'`,
      `'b', 1, 'N/A', 'yes', 'not json', 4900`,
      `'c', 1, '', 0, '["y"]', '50000'`,
      `'d', 1, 50000, 1, '["x"]', 7`,
      // a flag of 2: neither true nor false
      `'e', 1, 1, 2, '["x"]', 8`,
    ])
      await upstream.exec(`insert into ledger (id, version, amount, flag, tags, raw) values (${row})`)
    connector = ledgerConnector(upstream.url, { id: 'string', version: 'integer', amount: 'number', flag: 'boolean', tags: 'tags' })
    // `raw` has no declared type: SQLite keeps '500' as text there, and compares it above any number
    loose = ledgerConnector(upstream.url, { id: 'string', version: 'integer', raw: 'number' })
  })
  after(async () => {
    await connector?.close()
    await loose?.close()
    await upstream?.drop()
  })

  const search = (over: SqlConnector, filter: Filter) => searchAll(over, { resource: 'ledger', filter, pageSize: 2 }, {}, { scope, cursorCodec: codec })

  const cases: [Filter, string[], number][] = [
    [{}, ['a', 'd'], 3],
    [{ amount: { gte: 4900 } }, ['d'], 2],
    [{ amount: { lt: 10 } }, ['a'], 3],
    [{ amount: { not_in: [5] } }, ['d'], 3],
    [{ flag: true }, ['a', 'd'], 2],
    [{ flag: false }, [], 3],
    [{ tags: { contains: 'x' } }, ['a', 'd'], 2],
  ]
  for (const [filter, matching, unjudged] of cases) {
    it(`${JSON.stringify(filter)}: the records that match, and ${unjudged} named as not judged; never complete`, async () => {
      const envelope = await search(connector, filter)
      assert.deepEqual(
        envelope.items.map((r) => r.id),
        matching,
      )
      assert.equal(envelope.complete, false)
      const reason = envelope.incomplete_reasons.find((r) => r.code === 'SHAPE_MISMATCH')
      assert.ok(reason, JSON.stringify(envelope.incomplete_reasons))
      assert.equal((reason as { record_count?: number }).record_count, unjudged)
      assert.match(reason.message, /with another type than declared; they could not be judged and are not in the result \(correct the stored values, or declare each field as the type its values have\)/)
      // nothing shows a value no row held: "" is not 0
      assert.ok(envelope.items.every((r) => typeof r.fields.amount === 'number'))
    })
  }

  it('numerals kept as text in an untyped column compare as numbers, and the walk is complete', async () => {
    const envelope = await search(loose, { raw: { gte: 4900 } })
    assert.equal(envelope.complete, true, JSON.stringify(envelope.incomplete_reasons))
    assert.deepEqual(
      envelope.items.map((r) => [r.id, r.fields.raw]),
      [['b', 4900], ['c', 50000]],
    )
    const below = await search(loose, { raw: { lt: 1000 } })
    assert.deepEqual(
      below.items.map((r) => [r.id, r.fields.raw]),
      [['a', 500], ['d', 7], ['e', 8]],
    )
    assert.equal(below.complete, true)
  })

  it('read by id (an operation reading its targets): such a record is failed, naming its fields; the rest are read', async () => {
    const result = await connector.readByIds(['a', 'b', 'c', 'zz'])
    assert.deepEqual([...result.records.keys()], ['a'])
    assert.deepEqual(result.missing, ['zz'])
    assert.deepEqual(result.failed.map((f) => f.id).sort(), ['b', 'c'])
    const b = result.failed.find((f) => f.id === 'b')!.message
    assert.match(b, /record "b" holds "amount" as another type than number, "flag" as another type than boolean, "tags" as another type than tags; it cannot be judged/)
    assert.match(result.failed.find((f) => f.id === 'c')!.message, /record "c" holds "amount" as another type than number;/)
  })
})
