import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { DummyDriver, Kysely, PostgresAdapter, PostgresIntrospector, PostgresQueryCompiler } from 'kysely'
import pg from 'pg'
import { type Filter } from '../../../src/contract/index.js'
import { columnFactsOf, columnTypesOf, columnTypesQuery } from '../../../src/connectors/sql/column-types.js'
import { compileFilter } from '../../../src/connectors/sql/compile.js'
import type { SqlConnector } from '../../../src/connectors/sql/index.js'
import { createCursorCodec, searchAll } from '../../../src/inventory/index.js'
import { itAnswersExactly } from './support/exact-answers.js'
import { createUpstream, ledgerConnector, type Upstream } from './support/upstream.js'

/**
 * PostgreSQL columns whose `=` is not code-point equality of the value a record shows: char(n) (`=` ignores the
 * padding, which the driver showed), citext and a non-deterministic collation (case-insensitive `=`). A filter
 * ran in SQL, exclusion rules and preconditions in memory (`matchesFilter`): `not_in: ["active"]` left "ACTIVE"
 * and "active    " out of answers that said complete. A char(n) value is now read as PostgreSQL's own text of
 * it (no padding, as MySQL reads CHAR), and every string comparison on these columns is by code point.
 */
const TABLE = `create table ledger (id text primary key, version integer not null,
  padded char(10), folded citext, ci text collate ci, plain text, sized varchar(10))`

const ROWS = [
  ['a', 'active', 'ACTIVE', 'ACTIVE', 'active', 'active'],
  ['b', 'paused', 'paused', 'paused', 'paused', 'paused'],
  ['c', 'Active', 'active', 'active', 'active ', 'Active'],
] as const

const FIELDS = { id: 'string', version: 'integer', padded: 'string', folded: 'string', ci: 'string', plain: 'string', sized: 'string' } as const

const FILTERS = (field: string): Filter[] => [
  { [field]: 'active' },
  { [field]: 'ACTIVE' },
  { [field]: 'active ' },
  { [field]: { in: ['active', 'none'] } },
  { [field]: { not_in: ['active'] } },
  { [field]: { not_in: ['active '] } },
  { [field]: { gt: 'active' } },
  { [field]: { gte: 'active ' } },
  { [field]: { lt: 'b' } },
]

const scope = { resource: 'ledger', environment: 'test', visibility: 'all', restricted: false }
const codec = createCursorCodec({ key: 'k'.repeat(32) })

describe('sql on postgres: string equality is code-point equality of the value a record shows', () => {
  let upstream: Upstream
  let connector: SqlConnector
  before(async () => {
    upstream = await createUpstream('postgres')
    await upstream.exec('create extension if not exists citext')
    await upstream.exec("create collation ci (provider = icu, locale = 'und-u-ks-level2', deterministic = false)")
    await upstream.exec(TABLE)
    for (const row of ROWS) await upstream.exec('insert into ledger (id, version, padded, folded, ci, plain, sized) values (?, 1, ?, ?, ?, ?, ?)', [...row])
    connector = ledgerConnector(upstream.url, FIELDS)
  })
  after(async () => {
    await connector?.close()
    await upstream?.drop()
  })

  const search = async (filter: Filter) => {
    const envelope = await searchAll(connector, { resource: 'ledger', filter, pageSize: 2 }, {}, { scope, cursorCodec: codec })
    assert.equal(envelope.complete, true, JSON.stringify(envelope.incomplete_reasons))
    return envelope.items
  }

  it('only the columns whose `=` is not code-point equality pay for it: text and varchar keep their plain comparison', async () => {
    const db = new Kysely<any>({
      dialect: {
        createAdapter: () => new PostgresAdapter(),
        createDriver: () => new DummyDriver(),
        createIntrospector: (k) => new PostgresIntrospector(k),
        createQueryCompiler: () => new PostgresQueryCompiler(),
      },
    })
    const client = new pg.Client({ connectionString: upstream.url })
    await client.connect()
    try {
      const query = columnTypesQuery('postgres', db, 'ledger')
      const { rows } = await client.query(query.sql, query.parameters as unknown[])
      const facts = columnFactsOf({ fields: FIELDS, versionField: 'version', table: 'ledger' }, columnTypesOf('postgres', rows), 'postgres', { changedAfterUpdate: false, generatedFields: [] })
      assert.deepEqual([...facts.comparedByCodePoint].sort(), ['ci', 'folded', 'padded'])
      const sqlOf = (filter: Filter) => compileFilter(filter, FIELDS, 'postgres', 'filter', { comparedByCodePoint: facts.comparedByCodePoint })!.compile(db).sql
      assert.equal(sqlOf({ plain: 'active', sized: { not_in: ['a'] } }), '("plain" = $1 and "sized" not in ($2))')
    } finally {
      await client.end()
    }
  })

  it('a char(n) value is shown as PostgreSQL reads it as text, without its padding', async () => {
    const items = await search({})
    assert.deepEqual(
      items.map((r) => r.fields.padded),
      ['active', 'paused', 'Active'],
    )
    const read = await connector.readByIds(['a'])
    assert.equal(read.records.get('a')?.fields.padded, 'active')
  })

  itAnswersExactly(FIELDS, ['padded', 'folded', 'ci', 'plain', 'sized'], FILTERS, search)

  it('a precondition compares by code point, as the executor judged it in memory', async () => {
    // "ACTIVE" is not "active": the write is refused, as matchesFilter refuses it
    const refused = await connector.write({ id: 'a', expectedVersion: '1', set: { plain: 'x' }, precondition: { folded: 'active' } })
    assert.equal(refused.kind, 'conflict')
    assert.equal(refused.kind === 'conflict' && refused.reason, 'precondition_failed')
    const refusedCi = await connector.write({ id: 'a', expectedVersion: '1', set: { plain: 'x' }, precondition: { ci: 'active' } })
    assert.equal(refusedCi.kind === 'conflict' && refusedCi.reason, 'precondition_failed')
    const refusedPadded = await connector.write({ id: 'a', expectedVersion: '1', set: { plain: 'x' }, precondition: { padded: 'active ' } })
    assert.equal(refusedPadded.kind === 'conflict' && refusedPadded.reason, 'precondition_failed')
  })

  it('a char(n) write reads back the value written, and its precondition holds on the value shown', async () => {
    const outcome = await connector.write({ id: 'a', expectedVersion: '1', set: { padded: 'paused' }, precondition: { padded: 'active', folded: 'ACTIVE' } })
    assert.equal(outcome.kind, 'written', JSON.stringify(outcome))
    assert.equal(outcome.kind === 'written' && outcome.record?.fields.padded, 'paused')
    const window = await connector.writeWindow!([{ id: 'a', expectedVersion: (outcome.kind === 'written' && outcome.record?.version) || '', set: { padded: 'active' }, precondition: { padded: 'paused', ci: 'ACTIVE' } }])
    assert.equal(window[0]?.kind, 'written', JSON.stringify(window))
    assert.equal(window[0]?.kind === 'written' && window[0].record?.fields.padded, 'active')
  })
})
