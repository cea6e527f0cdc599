import assert from 'node:assert/strict'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import BetterSqlite3 from 'better-sqlite3'
import { DummyDriver, Kysely, SqliteAdapter, SqliteIntrospector, SqliteQueryCompiler } from 'kysely'
import { type Filter } from '../../../src/contract/index.js'
import { compileFilter } from '../../../src/connectors/sql/compile.js'
import type { SqlConnector } from '../../../src/connectors/sql/index.js'
import { createCursorCodec, searchAll } from '../../../src/inventory/index.js'
import { createTempDir } from '../../support/stores.js'
import { itAnswersExactly } from './support/exact-answers.js'
import { ledgerConnector } from './support/upstream.js'

/**
 * SQLite compares a column by its declared collation: NOCASE folds ASCII case, RTRIM ignores trailing spaces.
 * `folded = 'active'` answered "ACTIVE" and "Active" too, `not_in: ["active"]` left them out of an answer that said
 * complete, and a write's precondition `folded: "active"` held on "ACTIVE". Strings now compare under BINARY
 * (code points, as `matchesFilter` does) whatever the column declares.
 */
const FIELDS = { id: 'string', version: 'integer', folded: 'string', trimmed: 'string', plain: 'string' } as const
const scope = { resource: 'ledger', environment: 'test', visibility: 'all', restricted: false }
const codec = createCursorCodec({ key: 'k'.repeat(32) })

const FILTERS = (field: string): Filter[] => [
  { [field]: 'active' },
  { [field]: 'ACTIVE' },
  { [field]: { in: ['active', 'none'] } },
  { [field]: { not_in: ['active'] } },
  { [field]: { gt: 'active' } },
  { [field]: { gte: 'active ' } },
  { [field]: { lt: 'b' } },
]

describe('sql on sqlite: strings compare by code point whatever collation the column declares', () => {
  let dir: Awaited<ReturnType<typeof createTempDir>>
  let file: string
  let connector: SqlConnector
  before(async () => {
    dir = await createTempDir('warrant-sqlite-collation-')
    file = join(dir.path, 'upstream.db')
    const db = new BetterSqlite3(file)
    db.exec(`create table ledger (id text collate nocase primary key not null, version integer not null,
      folded text collate nocase, trimmed text collate rtrim, plain text);
      create index ledger_plain on ledger (plain)`)
    const insert = db.prepare('insert into ledger values (?, 1, ?, ?, ?)')
    insert.run('a', 'ACTIVE', 'active  ', 'active')
    insert.run('B', 'paused', 'paused', 'paused')
    insert.run('c', 'active', 'active', 'Active')
    insert.run('d', 'Active', 'b', 'x')
    db.close()
    connector = ledgerConnector(`sqlite:${file}`, FIELDS)
  })
  after(async () => {
    await connector?.close()
    await dir?.drop()
  })

  const search = async (filter: Filter, pageSize = 2) => {
    const envelope = await searchAll(connector, { resource: 'ledger', filter, pageSize }, {}, { scope, cursorCodec: codec })
    assert.equal(envelope.complete, true, JSON.stringify(envelope.incomplete_reasons))
    return envelope.items
  }

  it('a walk over a NOCASE id reads every record once, in pages of one', async () => {
    assert.deepEqual((await search({}, 1)).map((r) => r.id).sort(), ['B', 'a', 'c', 'd'])
  })

  itAnswersExactly(FIELDS, ['folded', 'trimmed', 'plain'], FILTERS, search)

  it('a precondition compares by code point, one write or a window', async () => {
    const refused = await connector.write({ id: 'a', expectedVersion: '1', set: { plain: 'x' }, precondition: { folded: 'active' } })
    assert.equal(refused.kind === 'conflict' && refused.reason, 'precondition_failed', JSON.stringify(refused))
    const window = await connector.writeWindow!([
      { id: 'a', expectedVersion: '1', set: { plain: 'y' }, precondition: { folded: 'active', trimmed: 'active' } },
      { id: 'c', expectedVersion: '1', set: { plain: 'y' }, precondition: { folded: 'active', trimmed: 'active' } },
    ])
    assert.equal(window[0]?.kind === 'conflict' && window[0].reason, 'precondition_failed', JSON.stringify(window[0]))
    assert.equal(window[1]?.kind, 'written', JSON.stringify(window[1]))
    const db = new BetterSqlite3(file, { readonly: true })
    try {
      assert.deepEqual(db.prepare('select id, plain from ledger where id in (?, ?) order by id').all('a', 'c'), [
        { id: 'a', plain: 'active' },
        { id: 'c', plain: 'y' },
      ])
    } finally {
      db.close()
    }
  })

  it('on a column of the default collation the comparison stays on its index', () => {
    const kysely = new Kysely<any>({
      dialect: {
        createAdapter: () => new SqliteAdapter(),
        createDriver: () => new DummyDriver(),
        createIntrospector: (k) => new SqliteIntrospector(k),
        createQueryCompiler: () => new SqliteQueryCompiler(),
      },
    })
    const db = new BetterSqlite3(file, { readonly: true })
    try {
      for (const filter of [{ plain: 'x' }, { plain: { in: ['x', 'y'] } }, { plain: { gt: 'x' } }] as Filter[]) {
        const query = kysely.selectFrom('ledger').selectAll().where(compileFilter(filter, FIELDS, 'sqlite')!).compile()
        const plan = db.prepare(`explain query plan ${query.sql}`).all(...(query.parameters as unknown[])) as { detail: string }[]
        assert.match(plan.map((p) => p.detail).join('; '), /USING (COVERING )?INDEX ledger_plain/, `${JSON.stringify(filter)}: ${query.sql}`)
      }
    } finally {
      db.close()
    }
  })
})
