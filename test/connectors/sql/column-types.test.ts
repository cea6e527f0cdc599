import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { decide } from '../../../src/contract/index.js'
import type { SqlConnector } from '../../../src/connectors/sql/index.js'
import { createCursorCodec, searchAll } from '../../../src/inventory/index.js'
import { checkResource } from '../../../src/checks/index.js'
import { SQL_KINDS, createUpstream, ledgerConnector, ledgerResource, type Upstream } from './support/upstream.js'

/**
 * A config that declares a field otherwise than its column holds it: amounts in a text column declared
 * `number`, a flag in a text column declared `boolean`. The engine compares such a column as text ("500" is
 * above "4900"; MySQL reads "N/A" as 0), so a filter on it answered with the wrong records and said it was
 * complete. A filter on such a field is now refused, naming the field, the column's type and the fix; reads
 * that do not filter on it still work.
 */
const TABLE = {
  sqlite: 'create table ledger (id text primary key, version integer not null, amount text, ok varchar(5), at text, n integer)',
  postgres: 'create table ledger (id text primary key, version integer not null, amount text, ok varchar(5), at text, n integer)',
  mysql: 'create table ledger (id varchar(20) primary key, version int not null, amount varchar(20), ok varchar(5), at varchar(40), n int)',
} as const

const ROWS = [
  ['a', '500', 'true', '2026-01-01T00:00:00.000Z', 1],
  ['b', '4900', 'false', '2026-02-01T00:00:00.000Z', 2],
  ['c', '50000', 'true', '2026-03-01T00:00:00.000Z', 3],
  ['d', 'N/A', 'true', '2026-04-01T00:00:00.000Z', 4],
] as const

const FIELDS = { id: 'string', version: 'integer', amount: 'number', ok: 'boolean', at: 'timestamp', n: 'integer' } as const

const scope = { resource: 'ledger', environment: 'test', visibility: 'all', restricted: false }
const codec = createCursorCodec({ key: 'k'.repeat(32) })

for (const kind of SQL_KINDS) {
  describe(`sql on ${kind}: a field declared otherwise than its column`, () => {
    let upstream: Upstream
    let connector: SqlConnector
    before(async () => {
      upstream = await createUpstream(kind)
      await upstream.exec(TABLE[kind])
      for (const [id, amount, ok, at, n] of ROWS) await upstream.exec(`insert into ledger (id, version, amount, ok, at, n) values ('${id}', 1, '${amount}', '${ok}', '${at}', ${n})`)
      connector = ledgerConnector(upstream.url, FIELDS)
    })
    after(async () => {
      await connector?.close()
      await upstream?.drop()
    })

    const search = (filter: Record<string, unknown>) => searchAll(connector, { resource: 'ledger', filter: filter as never, pageSize: 2 }, {}, { scope, cursorCodec: codec })

    for (const [field, filter, declared] of [
      ['amount', { amount: { gte: 4900 } }, 'number'],
      ['ok', { ok: true }, 'boolean'],
    ] as const) {
      it(`a filter on "${field}" (declared ${declared}) is refused, naming the column's type and the fix; nothing is claimed`, async () => {
        const envelope = await search(filter)
        assert.equal(envelope.complete, false)
        assert.deepEqual(envelope.items, [])
        const message = envelope.incomplete_reasons[0]?.message ?? ''
        assert.match(message, new RegExp(`field "${field}" is declared ${declared}, but column "${field}" of table ledger is (text|varchar|character varying)`, 'i'))
        assert.match(message, /no filter on it can be trusted and none was run; declare it one of string, tags or timestamp, or change the column/)
        assert.equal(envelope.continuation, null, 'the same filter would be refused again')
        assert.equal(decide(envelope, 'prove_absence').decision, 'refuse_or_request_review')
      })
    }

    it('a filter on fields whose columns fit is answered; a value that is no number is never shown as one', async () => {
      // declared as stored, but for amount (text): its numerals read as numbers, and "N/A" cannot be judged
      const declaredAsStored = ledgerConnector(upstream.url, { ...FIELDS, ok: 'string' })
      const walk = (filter: Record<string, unknown>) =>
        searchAll(declaredAsStored, { resource: 'ledger', filter: filter as never, pageSize: 2 }, {}, { scope, cursorCodec: codec })
      try {
        const envelope = await walk({ n: { gte: 2 }, at: { lt: '2026-04-01T00:00:00.000Z' } })
        assert.equal(envelope.complete, true, JSON.stringify(envelope.incomplete_reasons))
        assert.deepEqual(
          envelope.items.map((r) => [r.id, r.fields.amount]),
          [['b', 4900], ['c', 50000]],
        )
        const all = await walk({})
        assert.equal(all.complete, false)
        assert.deepEqual(all.items.map((r) => [r.id, r.fields.amount]), [['a', 500], ['b', 4900], ['c', 50000]])
        assert.equal(all.incomplete_reasons[0]?.code, 'SHAPE_MISMATCH')
        assert.match(all.incomplete_reasons[0]?.message ?? '', /1 record\(s\) of source "ledger-db" carried field\(s\) amount with another type than declared; they could not be judged/)
      } finally {
        await declaredAsStored.close()
      }
    })

    it('warrant check says which fields misfit their columns, naming their config lines; declared as stored, it holds', async () => {
      const report = await checkResource({ name: 'ledger', config: ledgerResource(upstream.url, FIELDS), connector })
      const guarantee = report.guarantees.find((g) => g.name === 'field_types')
      assert.equal(guarantee?.status, 'fails_closed', JSON.stringify(guarantee))
      assert.deepEqual(guarantee?.config_keys, ['fields.amount', 'fields.ok'])
      assert.match(guarantee?.detail ?? '', /field "amount" is declared number, but column "amount" of table ledger is .*: the database compares its values as text, not as numbers/)
      assert.notEqual(report.verdict, 'holds')
      const fitting = { ...FIELDS, amount: 'string', ok: 'string' } as const
      const declaredAsStored = ledgerConnector(upstream.url, fitting)
      try {
        const again = await checkResource({ name: 'ledger', config: ledgerResource(upstream.url, fitting), connector: declaredAsStored })
        assert.equal(again.guarantees.find((g) => g.name === 'field_types')?.status, 'holds')
      } finally {
        await declaredAsStored.close()
      }
    })
  })
}

/**
 * A boolean field over a number column. SQLite has no boolean (its 0 and 1 are one), and MariaDB's BOOLEAN is
 * TINYINT(1), which reads true as 1: both fit. PostgreSQL reads no true or false as an integer: every filter on
 * such a field failed at the database ("invalid input syntax for type integer"), surfaced as an upstream error,
 * and `warrant check` said the field types held. It is now a misfit there, refused before anything is sent with
 * the field, the column and the fix (declare it number); a boolean column, or a domain over one, still fits.
 */
const FLAG_COLUMNS: readonly { kind: (typeof SQL_KINDS)[number]; column: string; shown: string; fits: boolean }[] = [
  { kind: 'sqlite', column: 'integer', shown: 'integer', fits: true },
  { kind: 'mysql', column: 'tinyint(1)', shown: 'tinyint', fits: true },
  { kind: 'postgres', column: 'integer', shown: 'integer', fits: false },
  { kind: 'postgres', column: 'smallint', shown: 'smallint', fits: false },
  { kind: 'postgres', column: 'yes_no', shown: 'yes_no', fits: true },
]

for (const { kind, column, shown, fits } of FLAG_COLUMNS) {
  describe(`sql on ${kind}: a boolean field over a ${column} column`, () => {
    let upstream: Upstream
    let connector: SqlConnector
    const fields = { id: 'string', version: 'integer', flag: 'boolean', note: 'string' } as const
    before(async () => {
      upstream = await createUpstream(kind)
      if (column === 'yes_no') await upstream.exec('create domain yes_no as boolean')
      await upstream.exec(`create table ledger (id varchar(20) primary key, version integer not null, flag ${column}, note varchar(10))`)
      const [no, yes] = column === 'yes_no' ? ['false', 'true'] : ['0', '1']
      await upstream.exec(`insert into ledger (id, version, flag) values ('a', 1, ${no}), ('b', 1, ${yes}), ('c', 1, null)`)
      connector = ledgerConnector(upstream.url, fields)
    })
    after(async () => {
      await connector?.close()
      await upstream?.drop()
    })

    const search = (filter: Record<string, unknown>) => searchAll(connector, { resource: 'ledger', filter: filter as never, pageSize: 2 }, {}, { scope, cursorCodec: codec })
    const CAUSE = new RegExp(`field "flag" is declared boolean, but column "flag" of table ledger is ${shown}: PostgreSQL reads neither true nor false as a number, so a filter on it would fail at the database \\(declare the field number to filter on its 0 and 1\\)`)

    if (fits) {
      it('a filter on it is answered, complete; warrant check says the field types hold', async () => {
        for (const [filter, ids] of [
          [{ flag: true }, ['b']],
          [{ flag: { in: [false] } }, ['a']],
          [{ flag: { not_in: [true] } }, ['a']],
        ] as const) {
          const envelope = await search(filter)
          assert.equal(envelope.complete, true, JSON.stringify(envelope.incomplete_reasons))
          assert.deepEqual(envelope.items.map((r) => r.id), ids)
        }
        const report = await checkResource({ name: 'ledger', config: ledgerResource(upstream.url, fields), connector })
        assert.equal(report.guarantees.find((g) => g.name === 'field_types')?.status, 'holds')
      })
      return
    }

    it('a filter on it is refused before anything is sent, naming the field, the column and the fix', async () => {
      for (const filter of [{ flag: true }, { flag: { in: [true, false] } }]) {
        const envelope = await search(filter)
        assert.equal(envelope.complete, false)
        assert.deepEqual(envelope.items, [])
        const message = envelope.incomplete_reasons[0]?.message ?? ''
        assert.match(message, CAUSE)
        assert.match(message, /no filter on it can be trusted and none was run; declare it one of string, number or integer, or change the column/)
        assert.doesNotMatch(message, /invalid input syntax/)
        assert.equal(decide(envelope, 'prove_absence').decision, 'refuse_or_request_review')
      }
    })

    it('a precondition on it is refused the same way, nothing written; reads without it still work', async () => {
      await assert.rejects(connector.write({ id: 'a', expectedVersion: '1', set: { note: 'x' }, precondition: { flag: false } }), CAUSE)
      assert.equal((await search({})).items.find((r) => r.id === 'a')?.fields.note, null)
      const all = await search({})
      assert.deepEqual(all.items.map((r) => r.id), ['a', 'b', 'c'])
    })

    it('warrant check says the field misfits its column, naming its config line', async () => {
      const report = await checkResource({ name: 'ledger', config: ledgerResource(upstream.url, fields), connector })
      const guarantee = report.guarantees.find((g) => g.name === 'field_types')
      assert.equal(guarantee?.status, 'fails_closed', JSON.stringify(guarantee))
      assert.deepEqual(guarantee?.config_keys, ['fields.flag'])
      assert.match(guarantee?.detail ?? '', CAUSE)
    })
  })
}
