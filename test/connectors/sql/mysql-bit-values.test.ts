import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import type { SqlConnector } from '../../../src/connectors/sql/index.js'
import { createCursorCodec, searchAll } from '../../../src/inventory/index.js'
import { createUpstream, ledgerConnector, type Upstream } from './support/upstream.js'

const scope = { resource: 'ledger', environment: 'test', visibility: 'all', restricted: false }
const codec = createCursorCodec({ key: 'k'.repeat(32) })

/**
 * MySQL/MariaDB hand a BIT(n) value to the driver as bytes, which no declared type judges: every row of a BIT(1)
 * flag (MySQL's other usual boolean, beside TINYINT(1)) was left out as SHAPE_MISMATCH, and a filter `ok: true`
 * answered nothing, incomplete. A BIT value is read as the number its bits spell, judged as a TINYINT(1) is; one
 * wider than 48 bits stays bytes, and its rows are still named as not judged, never a rounded number.
 */
describe('sql on MariaDB: BIT columns', () => {
  let upstream: Upstream
  let connector: SqlConnector
  before(async () => {
    upstream = await createUpstream('mysql')
    await upstream.exec('create table ledger (id varchar(20) primary key, version int not null, ok bit(1), flags bit(3), wide bit(64))')
    await upstream.exec("insert into ledger values ('a', 1, b'1', b'101', 1), ('b', 1, b'0', b'000', 2), ('c', 1, null, null, null)")
    connector = ledgerConnector(upstream.url, { id: 'string', version: 'integer', ok: 'boolean', flags: 'integer' } as never)
  })
  after(async () => {
    await connector?.close()
    await upstream?.drop()
  })

  const search = (filter: Record<string, unknown>, on = connector) => searchAll(on, { resource: 'ledger', filter: filter as never, pageSize: 2 }, {}, { scope, cursorCodec: codec })

  it('every row is read, BIT(1) as true and false, BIT(3) as its number, NULL as null; complete', async () => {
    const envelope = await search({})
    assert.equal(envelope.complete, true, JSON.stringify(envelope.incomplete_reasons))
    assert.deepEqual(
      envelope.items.map((r) => [r.id, r.fields.ok, r.fields.flags]),
      [
        ['a', true, 5],
        ['b', false, 0],
        ['c', null, null],
      ],
    )
  })

  it('filters on them answer the rows whose bits match, complete', async () => {
    for (const [filter, ids] of [
      [{ ok: true }, ['a']],
      [{ ok: false }, ['b']],
      [{ flags: 5 }, ['a']],
      [{ flags: { gte: 1 } }, ['a']],
    ] as const) {
      const envelope = await search(filter)
      assert.equal(envelope.complete, true, `${JSON.stringify(filter)}: ${JSON.stringify(envelope.incomplete_reasons)}`)
      assert.deepEqual(
        envelope.items.map((r) => r.id),
        ids,
        JSON.stringify(filter),
      )
    }
  })

  it('a BIT(64) field stays bytes: its rows are named as not judged, never a rounded number', async () => {
    const wide = ledgerConnector(upstream.url, { id: 'string', version: 'integer', wide: 'integer' } as never)
    try {
      const envelope = await search({}, wide)
      assert.equal(envelope.complete, false)
      assert.equal(envelope.incomplete_reasons[0]?.code, 'SHAPE_MISMATCH')
    } finally {
      await wide.close()
    }
  })
})
