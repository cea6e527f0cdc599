import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { decide, type Filter } from '../../../src/contract/index.js'
import type { FieldType } from '../../../src/config/index.js'
import type { SqlConnector } from '../../../src/connectors/sql/index.js'
import { createCursorCodec, searchAll } from '../../../src/inventory/index.js'
import { createUpstream, ledgerConnector, type Kind, type Upstream } from './support/upstream.js'

/**
 * The server engines keep values a field's declared type cannot judge wherever the column's type admits them:
 * MariaDB's BOOLEAN is TINYINT(1) and takes a 2, a text column under tags takes "vip,gold" or JSON that is no
 * list (so does a jsonb column), a text column under a timestamp takes any spelling. The filter ran only in
 * SQL there, so `flag: true` and `flag: false` both left the 2 out, `contains` left out every row that was no
 * list, and PostgreSQL compared a timestamp kept as text as text ("2024-06-01 11:00:00+00" is not after
 * "2024-06-01T10:00:00Z" as text) — each with the search saying complete. Such rows now reach the page judge,
 * as on SQLite: counted and named as not judged (SHAPE_MISMATCH, the walk not complete), or judged by instant.
 */
const scope = { resource: 'ledger', environment: 'test', visibility: 'all', restricted: false }
const codec = createCursorCodec({ key: 'k'.repeat(32) })
const ID = { mysql: 'varchar(20) collate utf8mb4_bin', postgres: 'text collate "C"' } as const

type Case = [filter: Filter, matching: string[], unjudged: number]

/** A table `ledger(id, version, <column>)` of rows, searched in pages of 2 with each case's filter. */
function suite(kind: Exclude<Kind, 'sqlite'>, title: string, column: string, field: FieldType, rows: readonly (string | null)[], cases: readonly Case[]) {
  describe(`sql on ${kind}: ${title}`, () => {
    let upstream: Upstream
    let connector: SqlConnector
    before(async () => {
      upstream = await createUpstream(kind)
      await upstream.exec(`create table ledger (id ${ID[kind]} primary key, version integer not null, v ${column})`)
      for (const [i, v] of rows.entries()) await upstream.exec('insert into ledger (id, version, v) values (?, 1, ?)', [String.fromCharCode(97 + i), v])
      connector = ledgerConnector(upstream.url, { id: 'string', version: 'integer', v: field })
    })
    after(async () => {
      await connector?.close()
      await upstream?.drop()
    })

    for (const [filter, matching, unjudged] of cases) {
      it(`${JSON.stringify(filter)}: ${JSON.stringify(matching)}, ${unjudged} named as not judged`, async () => {
        const envelope = await searchAll(connector, { resource: 'ledger', filter, pageSize: 2 }, {}, { scope, cursorCodec: codec })
        assert.deepEqual(envelope.items.map((r) => r.id), matching)
        const reason = envelope.incomplete_reasons.find((r) => r.code === 'SHAPE_MISMATCH')
        if (unjudged === 0) {
          assert.equal(envelope.complete, true, JSON.stringify(envelope.incomplete_reasons))
          return
        }
        assert.equal(envelope.complete, false)
        assert.notEqual(decide(envelope, 'prove_absence').decision, 'proceed')
        assert.ok(reason, JSON.stringify(envelope.incomplete_reasons))
        assert.equal((reason as { record_count?: number }).record_count, unjudged)
        assert.deepEqual((reason as { fields?: string[] }).fields, ['v'])
      })
    }
  })
}

// a: false, b: true, c: 2 (neither), d: NULL
suite('mysql', 'a boolean in a TINYINT(1) holding 2', 'boolean', 'boolean', ['0', '1', '2', null], [
  [{ v: true }, ['b'], 1],
  [{ v: false }, ['a'], 1],
  [{ v: { in: [true, false] } }, ['a', 'b'], 1],
  [{ v: { not_in: [true] } }, ['a'], 1],
  [{ v: { is_null: true } }, ['d'], 0],
])

// a real boolean column holds nothing else: the SQL's answer stands, complete
suite('postgres', 'a boolean column', 'boolean', 'boolean', ['false', 'true', null], [
  [{ v: true }, ['b'], 0],
  [{ v: { in: [true, false] } }, ['a', 'b'], 0],
])

const TAGS = ['["vip"]', 'vip,gold', '"vip"', '{"vip": true}', '["basic"]', null, '[]']
suite('mysql', 'tags in a TEXT column holding text that is no JSON list', 'text', 'tags', TAGS, [
  [{ v: { contains: 'vip' } }, ['a'], 3],
  [{ v: { contains: 'basic' } }, ['e'], 3],
  [{ v: { is_null: true } }, ['f'], 0],
])

// MariaDB's JSON_CONTAINS reads neither a number as the tag a record shows it as ("1"), nor an escape ("\\u0076" is
// "v"): such lists are judged in memory, as the record reads them (they were left out, the answer complete)
suite('mysql', 'tags in a TEXT column holding lists with numbers or escapes', 'text', 'tags', [...TAGS, '[1, "vip"]', '["\\u0076ip"]', '[1]', ' [ "gold" , "vip" ] ', '["a\\"b", "vip"]'], [
  [{ v: { contains: 'vip' } }, ['a', 'h', 'i', 'k', 'l'], 3],
  [{ v: { contains: '1' } }, ['h', 'j'], 3],
  [{ v: { contains: 'a"b' } }, ['l'], 3],
])

suite('mysql', 'tags in a JSON column holding lists with numbers or escapes', 'json', 'tags', ['["vip"]', '[1, "vip"]', '["\\u0076ip"]', '["gold"]', null], [
  [{ v: { contains: 'vip' } }, ['a', 'b', 'c'], 0],
  [{ v: { contains: '1' } }, ['b'], 0],
])

// PostgreSQL's cast fails the statement on text that is no JSON: such text never reaches it. A list holding a
// number or an escape is judged in memory, as the record reads it.
suite('postgres', 'tags in a text column holding text that is no JSON list', 'text', 'tags', [...TAGS, '[vip', ' [ "gold" , "vip" ] ', '[1, "vip"]', '["a\\"b", "vip"]'], [
  [{ v: { contains: 'vip' } }, ['a', 'i', 'j', 'k'], 4],
  [{ v: { contains: 'a"b' } }, ['k'], 4],
  [{ v: { contains: '1' } }, ['j'], 4],
  [{ v: { is_null: false } }, ['a', 'e', 'g', 'i', 'j', 'k'], 4],
])

// jsonb is always JSON, not always a list
suite('postgres', 'tags in a jsonb column holding JSON that is no list', 'jsonb', 'tags', ['["vip"]', '"vip"', '{"vip": true}', '["basic"]', null], [
  [{ v: { contains: 'vip' } }, ['a'], 2],
  [{ v: { contains: 'gold' } }, [], 2],
])

// the same instant, 11:00 UTC, in four spellings (b: PostgreSQL's own timestamptz::text), then 09:00 and 12:00
const AT = ['2024-06-01T11:00:00.000Z', '2024-06-01 11:00:00+00:00', '2024-06-01T11:00:00Z', '2024-06-01T13:00:00+02:00', '2024-06-01T09:00:00.000Z', '2024-06-01 12:00:00', null]
for (const kind of ['postgres', 'mysql'] as const) {
  suite(kind, 'a timestamp in a text column, in several spellings', 'varchar(40)', 'timestamp', AT, [
    [{ v: { gt: '2024-06-01T10:00:00Z' } }, ['a', 'b', 'c', 'd', 'f'], 0],
    [{ v: { lt: '2024-06-01T11:30:00+00:00' } }, ['a', 'b', 'c', 'd', 'e'], 0],
    [{ v: { lte: '2024-06-01T11:00:00Z' } }, ['a', 'b', 'c', 'd', 'e'], 0],
    [{ v: { eq: '2024-06-01T11:00:00Z' } }, ['a', 'b', 'c', 'd'], 0],
    [{ v: { not_in: ['2024-06-01T11:00:00Z'] } }, ['e', 'f'], 0],
    [{ v: { gte: '2024-06-01' } }, ['a', 'b', 'c', 'd', 'e', 'f'], 0],
  ])
  // c is spelled as toISOString spells instants, but names none; d is a leap day
  const noInstant = ['2024-06-01T11:00:00.000Z', 'N/A', '2024-02-30T12:00:00.000Z', '2024-02-29T12:00:00.000Z', '2023-02-29T12:00:00.000Z']
  suite(kind, 'a timestamp in a text column holding no instant', 'varchar(40)', 'timestamp', noInstant, [
    [{ v: { gt: '2024-06-01T10:00:00Z' } }, ['a'], 3],
    [{ v: { lt: '2024-06-01T10:00:00Z' } }, ['d'], 3],
  ])
}
