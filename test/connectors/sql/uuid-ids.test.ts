import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import type { UpstreamCall } from '../../../src/connectors/index.js'
import { startDemoGateway } from '../../support/gateway-fixture.js'
import { openAnyUpstream } from '../../operations/support/upstream-connection.js'
import { createEngine, type Engine } from './support/engine.js'

/**
 * A PostgreSQL uuid id column: a record shows its id as PostgreSQL writes a uuid (lower case, hyphenated). A read by
 * "abc" was sent and failed the statement at the database ("invalid input syntax for type uuid"), which the API
 * answered 502 upstream_unavailable, as if the upstream were down: such an id is now refused before any statement,
 * as any id a column's type cannot be. The same uuid in capitals (or braced, or without hyphens) is a uuid the
 * engine matches to the row shown otherwise: failed as another spelling, never missing, and the API says 400.
 */
const ID = '8858e24a-f7c1-412f-a941-acde134b5c2a'

describe('sql on postgres: a uuid id column', () => {
  let engine: Engine
  before(async () => {
    engine = await createEngine('postgres')
    await engine.exec('create table invoices (id uuid primary key, status text, version integer not null)')
    await engine.exec(`insert into invoices values ('${ID}', 'open', 1)`)
  })
  after(() => engine?.drop())

  it('reads the id as a record shows it; refuses other spellings and non-uuids before any statement, failed (never missing)', async () => {
    const calls: UpstreamCall[] = []
    const connector = engine.connector('invoices', { id: 'string', status: 'string', version: 'integer' }, {}, { onCall: (call) => calls.push(call) })
    try {
      const others = [ID.toUpperCase(), `{${ID}}`, ID.replaceAll('-', '')]
      const read = await connector.readByIds([ID, 'abc', 'not-a-uuid-at-all-0000000000000000', ...others])
      assert.equal(read.records.get(ID)?.fields.status, 'open')
      assert.deepEqual(read.missing, [])
      assert.deepEqual(read.failed.map((f) => f.id).sort(), ['abc', 'not-a-uuid-at-all-0000000000000000', ...others].sort())
      for (const f of read.failed.filter((f) => !others.includes(f.id))) assert.match(f.message, /cannot be a value of id column "id" of table invoices \(uuid\)/)
      for (const f of read.failed.filter((f) => others.includes(f.id))) assert.match(f.message, new RegExp(`matches the row stored as "${ID}".*names no record here`))
      assert.ok(read.failed.every((f) => f.idRefused === true))
      assert.deepEqual(calls.filter((c) => c.outcome === 'error'), [], 'no statement failed at the database')
    } finally {
      await connector.close()
    }
  })
})

describe('a record read over HTTP by an id a uuid column cannot be', () => {
  it('is 400 naming the id (was 502 upstream_unavailable, as if the upstream were down); the id as shown reads 200', async () => {
    const fx = await startDemoGateway({
      store: 'sqlite',
      upstream: 'postgres',
      count: 5,
      edit: (config) => {
        config.resources.invoices = {
          environment: config.resources.subscriptions.environment,
          connector: { kind: 'sql', url: config.resources.subscriptions.connector.url, table: 'invoices' },
          fields: { id: 'string', version: 'integer', status: 'string' },
          id_field: 'id',
          version_field: 'version',
          review_fields: ['id', 'status'],
          actions: {},
        }
      },
    })
    const upstream = await openAnyUpstream(fx.upstreamUrl)
    try {
      await upstream.exec('create table invoices (id uuid primary key, version integer not null, status text)')
      await upstream.exec(`insert into invoices values ('${ID}', 1, 'open')`)
      const agent = fx.as('admin')
      assert.equal((await agent('GET', `/v1/resources/invoices/records/${ID}`)).status, 200)
      for (const id of ['abc', ID.toUpperCase()]) {
        const read = await agent('GET', `/v1/resources/invoices/records/${encodeURIComponent(id)}`)
        assert.equal(read.status, 400, JSON.stringify(read.body))
        assert.equal(read.body.error.code, 'invalid_request')
        assert.match(read.body.error.message, new RegExp(`no record of invoices can be read as "${id}": .*(cannot be a value of id column "id" of table invoices \\(uuid\\)|names no record here)`))
      }
    } finally {
      await upstream.close()
      await fx.close()
    }
  })
})
