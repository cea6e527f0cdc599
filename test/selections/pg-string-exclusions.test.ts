import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import pg from 'pg'
import { SYSTEM_ACTOR } from '../../src/contract/index.js'
import { type GatewayFixture, startDemoGateway } from '../support/gateway-fixture.js'
import { createTestPostgresDatabase } from '../support/stores.js'

/**
 * An exclusion rule is judged in memory on the value a record shows; a selection's filter runs in SQL. On
 * PostgreSQL char(n) (padding), citext and a non-deterministic collation (case) made them disagree: the filter
 * `{status: "active"}` selected record a, and the exclusion rule with the same filter excluded nothing, so a
 * reviewer's "keep the active ones out" was silently not applied. The rule now excludes exactly the records the
 * same filter selects.
 */
const COLUMNS = {
  bpchar: { type: 'char(10)', rows: [['a', 'active'], ['b', 'paused'], ['c', 'Active']] },
  citext: { type: 'citext', rows: [['a', 'ACTIVE'], ['b', 'paused'], ['c', 'active']] },
  nondet: { type: 'text collate ci', rows: [['a', 'ACTIVE'], ['b', 'paused'], ['c', 'active']] },
} as const

describe('selections on postgres: an exclusion rule excludes what the same filter selects', () => {
  let fx: GatewayFixture
  let database: Awaited<ReturnType<typeof createTestPostgresDatabase>>
  before(async () => {
    database = await createTestPostgresDatabase()
    const client = new pg.Client({ connectionString: database.url })
    await client.connect()
    try {
      await client.query('create extension if not exists citext')
      await client.query("create collation ci (provider = icu, locale = 'und-u-ks-level2', deterministic = false)")
      for (const [name, spec] of Object.entries(COLUMNS)) {
        await client.query(`create table t_${name} (id text primary key, status ${spec.type}, plan text, version integer not null)`)
        for (const [id, status] of spec.rows) await client.query(`insert into t_${name} values ($1, $2, 'basic', 1)`, [id, status])
      }
    } finally {
      await client.end()
    }
    fx = await startDemoGateway({
      store: 'sqlite',
      count: 5,
      edit: (raw) => {
        for (const name of Object.keys(COLUMNS))
          raw.resources[`t_${name}`] = {
            environment: raw.resources.subscriptions.environment,
            connector: { kind: 'sql', url: database.url, table: `t_${name}` },
            fields: { id: 'string', status: 'string', plan: 'string', version: 'integer' },
            id_field: 'id',
            version_field: 'version',
            review_fields: ['id', 'status', 'plan'],
          }
      },
    })
  })
  after(async () => {
    await fx?.close()
    await database?.drop()
  })

  for (const name of Object.keys(COLUMNS)) {
    for (const status of ['active', 'ACTIVE', 'active ']) {
      it(`${name}: exclude {status: ${JSON.stringify(status)}} leaves out exactly what that filter selects`, async () => {
        const resource = `t_${name}`
        const found = await fx.gateway.selections.create(SYSTEM_ACTOR, resource, { filter: { status } })
        const sel = await fx.gateway.selections.create(SYSTEM_ACTOR, resource, { filter: { plan: 'basic' }, exclude: [{ rule: 'keep_active', filter: { status } }] })
        assert.equal(found.complete, true)
        assert.equal(sel.complete, true)
        const members = sel.records.map((r) => r.id)
        const excluded = ['a', 'b', 'c'].filter((id) => !members.includes(id))
        assert.deepEqual(excluded, found.records.map((r) => r.id), `members ${JSON.stringify(sel.records)}; selected by the filter ${JSON.stringify(found.records)}`)
        assert.equal(sel.exclusions[0]?.count, excluded.length)
      })
    }
  }
})
