import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { after, before, describe, test } from 'node:test'
import pg from 'pg'
import { checkResource, CHECK_EXIT_CODES, type CheckReport } from '../../src/checks/index.js'
import { resourceSchema } from '../../src/config/index.js'
import { createSqlConnector, type SqlConnector } from '../../src/connectors/sql/index.js'
import { createCliWorkspace, type CliWorkspace } from '../support/cli-config.js'
import { createTestPostgresDatabase, TEST_POSTGRES_ADMIN_URL, type TestDatabase } from '../support/stores.js'

// A sql connector's writes rest on what the catalogue says of the table (its engine and key: table facts; its
// version column's precision and UPDATE triggers: column facts). Where that could not be read, the connector
// does not refuse the write (the statement itself fails, or runs): nothing proves the version is enforced, so
// `warrant check` must say `unknown` with the reason, never `holds`, and exit 4 (could not tell).
const FIELDS = { id: 'string', status: 'string', version: 'integer' }

const RESOURCE = (url: string) => ({
  environment: { name: 'test' },
  connector: { kind: 'sql', url, table: 'things', source: 'things-db' },
  fields: FIELDS,
  version_field: 'version',
  review_fields: ['id', 'status'],
  actions: { pause: { set: { status: 'paused' }, precondition: {} } },
})

/**
 * A PostgreSQL database with table `things` and a login role that may read and update it, but not read the
 * catalogue view `hidden` (revoked from PUBLIC in this database only): the catalogue read that needs it fails.
 */
async function restrictedDatabase(hidden: string): Promise<{ database: TestDatabase; url: string; drop: () => Promise<void> }> {
  const database = await createTestPostgresDatabase()
  const role = `warrant_nocat_${randomBytes(4).toString('hex')}`
  const admin = new pg.Client({ connectionString: database.url })
  await admin.connect()
  try {
    await admin.query('create table things (id varchar(20) primary key, status varchar(20), version integer not null)')
    await admin.query("insert into things values ('a', 'active', 1), ('b', 'past_due', 1)")
    await admin.query(`create role ${role} login`)
    await admin.query(`grant select, update on things to ${role}`)
    await admin.query(`revoke select on pg_catalog.${hidden} from public`)
  } finally {
    await admin.end()
  }
  const url = new URL(database.url)
  url.username = role
  return {
    database,
    url: url.toString(),
    drop: async () => {
      await database.drop()
      const server = new pg.Client({ connectionString: TEST_POSTGRES_ADMIN_URL })
      await server.connect()
      await server.query(`drop role if exists ${role}`).finally(() => server.end())
    },
  }
}

const guarantee = (report: CheckReport, name: string) => report.guarantees.find((g) => g.name === name)

// pg_index: the table facts (is the id a key); pg_trigger: the column facts (UPDATE triggers, read with the types)
for (const [hidden, part] of [['pg_index', 'table'], ['pg_trigger', 'column']] as const) {
  describe(`warrant check on PostgreSQL whose ${part} catalogue cannot be read (${hidden} revoked)`, () => {
    let db: Awaited<ReturnType<typeof restrictedDatabase>>
    let ws: CliWorkspace
    const connectors: SqlConnector[] = []
    before(async () => {
      db = await restrictedDatabase(hidden)
      ws = await createCliWorkspace({ count: 10, edit: (raw) => void (raw.resources.things = RESOURCE(db.url)) })
    })
    after(async () => {
      await Promise.all(connectors.map((c) => c.close()))
      await ws?.drop()
      await db?.drop()
    })

    test('conditional_writes is unknown, saying the catalogue could not be read; the verdict is unknown', async () => {
      const config = resourceSchema.parse(RESOURCE(db.url))
      const connector = createSqlConnector({ resource: config })
      connectors.push(connector)
      // the role reads the table: only the catalogue is out of its reach
      assert.equal((await connector.readByIds(['a'])).records.get('a')?.fields.status, 'active')
      const report = await checkResource({ name: 'things', config, connector })
      const writes = guarantee(report, 'conditional_writes')
      assert.equal(writes?.status, 'unknown', JSON.stringify(writes))
      assert.match(writes?.detail ?? '', new RegExp(`catalogue could not be read.*nothing shows the database enforces the version`))
      assert.equal(report.verdict, 'unknown')
    })

    test('the real `warrant check` prints it and exits 4 (could not tell)', { timeout: 120_000 }, async () => {
      const run = await ws.warrant(['check', 'things'])
      assert.equal(run.code, CHECK_EXIT_CODES.unknown, `${run.stdout}\n${run.stderr}`)
      assert.match(run.stdout, /^conditional_writes\s+unknown\s+.*catalogue could not be read/m, run.stdout)
      assert.doesNotMatch(run.stdout, /^conditional_writes\s+holds/m)
    })
  })
}
