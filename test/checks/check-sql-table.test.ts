import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { checkResource, renderCheckReport, type CheckReport } from '../../src/checks/index.js'
import { CHECK_EXIT_CODES } from '../../src/checks/index.js'
import { resourceSchema } from '../../src/config/index.js'
import { createSqlConnector, type SqlConnector } from '../../src/connectors/sql/index.js'
import { createEngine, type Engine, type Kind } from '../connectors/sql/support/engine.js'

// What the catalogue says of the table as a whole (its engine, its key, its id's precision) decides what the sql
// connector refuses: `warrant check` must say so, never report the write guarantees holding on a table whose
// writes are all refused, nor keep quiet about an id column no key proves unique.
const FIELDS = { id: 'string', status: 'string', version: 'integer' }

const guarantee = (report: CheckReport, name: string) => report.guarantees.find((g) => g.name === name)

function tableCase(kind: Kind, setup: readonly string[]) {
  let engine: Engine
  const connectors: SqlConnector[] = []
  before(async () => {
    engine = await createEngine(kind)
    for (const statement of setup) await engine.exec(statement)
  })
  after(async () => {
    await Promise.all(connectors.map((c) => c.close()))
    await engine?.drop()
  })
  return async (table: string, fields: Record<string, string> = FIELDS, precondition: Record<string, unknown> = {}, set: Record<string, unknown> = { status: 'paused' }) => {
    const config = resourceSchema.parse({
      environment: { name: 'test' },
      connector: { kind: 'sql', url: engine.url, table, source: 'things-db' },
      fields,
      version_field: 'version',
      review_fields: ['id', 'status'],
      actions: { pause: { set, precondition } },
    })
    const connector = createSqlConnector({ resource: config })
    connectors.push(connector)
    return checkResource({ name: table, config, connector })
  }
}

describe('warrant check on a MariaDB table without transactions', () => {
  const check = tableCase('mysql', [
    'create table things (id varchar(20) primary key, status varchar(20), version integer not null) engine=MyISAM',
    "insert into things values ('a', 'active', 1), ('b', 'active', 1)",
    'create table innodb_things (id varchar(20) primary key, status varchar(20), version integer not null) engine=InnoDB',
    "insert into innodb_things values ('a', 'active', 1)",
  ])

  test('MyISAM: conditional_writes fails closed with the engine and the fix; reads still hold', async () => {
    const report = await check('things')
    const writes = guarantee(report, 'conditional_writes')
    assert.equal(writes?.status, 'fails_closed', JSON.stringify(writes))
    assert.match(writes?.detail ?? '', /table things is a MyISAM table, which keeps no transactions.*Convert the table to InnoDB.*\(writes are refused\)/)
    assert.equal(guarantee(report, 'id_column')?.status, 'holds', JSON.stringify(guarantee(report, 'id_column')))
    assert.equal(report.verdict, 'fails_closed')
  })

  test('InnoDB: conditional_writes and id_column hold', async () => {
    const report = await check('innodb_things')
    assert.equal(guarantee(report, 'conditional_writes')?.status, 'holds')
    assert.equal(guarantee(report, 'id_column')?.status, 'holds')
    assert.equal(report.verdict, 'holds', JSON.stringify(report.guarantees.filter((g) => g.status !== 'holds' && g.status !== 'not_applicable')))
  })
})

describe('warrant check on a PostgreSQL timestamp id finer than a millisecond', () => {
  const check = tableCase('postgres', [
    'create table things (id timestamptz primary key, status varchar(20), version integer not null)',
    "insert into things values ('2024-06-01 12:00:00.000100Z', 'active', 1), ('2024-06-01 12:00:00.000200Z', 'past_due', 1)",
  ])

  test('reads and writes fail closed on id_field, naming timestamp(3)', async () => {
    const report = await check('things', { id: 'timestamp', status: 'string', version: 'integer' })
    const id = guarantee(report, 'id_column')
    assert.equal(id?.status, 'fails_closed', JSON.stringify(id))
    assert.deepEqual(id?.config_keys, ['id_field'])
    assert.match(id?.detail ?? '', /keeps 6 fractional digits.*timestamp\(3\).*\(reads, reads by id and writes are refused\)/)
    const writes = guarantee(report, 'conditional_writes')
    assert.equal(writes?.status, 'fails_closed', JSON.stringify(writes))
    assert.match(writes?.detail ?? '', /timestamp\(3\).*\(writes are refused\)/)
    assert.equal(report.verdict, 'fails_closed')
  })
})

describe('warrant check on a SQLite view (an id no key proves unique)', () => {
  const check = tableCase('sqlite', [
    'create table base (id text primary key not null, status text, version integer not null)',
    "insert into base values ('a', 'active', 1), ('b', 'active', 1)",
    'create view things as select id, status, version from base',
  ])

  test('id_column is a warning saying walks are checked page by page and refused on a repeat; the verdict still holds', async () => {
    const report = await check('things')
    const id = guarantee(report, 'id_column')
    assert.equal(id?.status, 'warning', JSON.stringify(id))
    assert.deepEqual(id?.config_keys, [])
    assert.match(id?.detail ?? '', /id column "id" of table things is not proven unique.*every page.*refused/)
    assert.equal(report.verdict, 'holds', JSON.stringify(report.guarantees.filter((g) => g.status !== 'holds')))
    assert.equal(CHECK_EXIT_CODES[report.verdict], 0)
    assert.match(renderCheckReport(report), /id_column\s+WARNING\s+id column "id"/)
    assert.match(renderCheckReport(report).split('\n')[0]!, /1 warning/)
  })

  test('the table under it: id_column holds', async () => {
    const report = await check('base')
    assert.equal(guarantee(report, 'id_column')?.status, 'holds')
  })
})

// a precondition on a field its column compares otherwise than declared (a string over a DATETIME): the connector
// refuses every write of that action (test/connectors/sql/misfit-preconditions.test.ts), and check says so
for (const [kind, column] of [['mysql', 'datetime'], ['postgres', 'timestamptz']] as const) {
  describe(`warrant check on ${kind}: an action's precondition on a string field over a ${column} column`, () => {
    const check = tableCase(kind, [`create table things (id varchar(20) primary key, status varchar(20), at ${column}, version integer not null)`])
    const fields = { ...FIELDS, at: 'string' }

    test('conditional_writes fails closed, naming the action, the field and the config key', async () => {
      const report = await check('things', fields, { at: '2024-06-01T12:00:00.000Z' })
      const writes = guarantee(report, 'conditional_writes')
      assert.equal(writes?.status, 'fails_closed', JSON.stringify(writes))
      assert.match(writes?.detail ?? '', /action "pause" has a precondition on "at": field "at" is declared string, but column "at" of table things is .*judge it otherwise than the plan \(writes are refused\)/)
      assert.deepEqual(writes?.config_keys, ['actions.pause.precondition'])
    })

    test('a precondition on a fitting field: conditional_writes holds', async () => {
      assert.equal(guarantee(await check('things', fields, { status: 'active' }), 'conditional_writes')?.status, 'holds')
    })
  })
}

// an action setting a value into a column of another type than its field is declared (a boolean into a PostgreSQL
// integer): the proposal and the connector refuse every write of it (test/plans/set-column-misfits.test.ts), and check says so
describe('warrant check on postgres: an action setting a boolean field over an integer column', () => {
  const check = tableCase('postgres', ['create table things (id varchar(20) primary key, status varchar(20), flag integer, version integer not null)'])
  const fields = { ...FIELDS, flag: 'boolean' }

  test('conditional_writes fails closed, naming the action, the field, the column and the config key', async () => {
    const writes = guarantee(await check('things', fields, {}, { flag: true }), 'conditional_writes')
    assert.equal(writes?.status, 'fails_closed', JSON.stringify(writes))
    assert.match(writes?.detail ?? '', /action "pause" sets "flag": field "flag" is declared boolean, but column "flag" of table things is integer: .*\(writes are refused\)/)
    assert.deepEqual(writes?.config_keys, ['actions.pause.set.flag'])
  })

  test('an action setting it to null, or setting a fitting field: conditional_writes holds', async () => {
    assert.equal(guarantee(await check('things', fields, {}, { flag: null }), 'conditional_writes')?.status, 'holds')
    assert.equal(guarantee(await check('things', fields), 'conditional_writes')?.status, 'holds')
  })
})
