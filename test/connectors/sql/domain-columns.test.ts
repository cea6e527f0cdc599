import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import type { UpstreamCall } from '../../../src/connectors/index.js'
import { createEngine, type Engine } from './support/engine.js'

/**
 * PostgreSQL domains: the catalogue names a column of one by the domain (account_id), not by its base type (uuid).
 * An id column of a domain over uuid sent "abc" to the database, which failed the statement ("invalid input syntax
 * for type uuid"), and every other id of the batch with it; a number field over a domain over smallint or integer
 * escaped the number fit check, so 40000 or 12.5 was sent (refused or rounded at the database) instead of refused
 * before any statement. Domains are now judged by their base type (a domain over a domain too); a domain's own CHECK
 * cannot be judged and the refusal says the column is a domain.
 */
const ID = '8858e24a-f7c1-412f-a941-acde134b5c2a'

describe('sql on postgres: columns of a domain are judged by the domain\'s base type', () => {
  let engine: Engine
  before(async () => {
    engine = await createEngine('postgres')
    await engine.exec('create domain account_id as uuid')
    await engine.exec('create domain small_count as smallint')
    await engine.exec('create domain positive_count as integer check (value > 0)')
    await engine.exec('create domain nested_count as small_count')
    await engine.exec('create domain cents as numeric(8,2)')
    await engine.exec('create table accounts (id account_id primary key, version integer not null, n small_count, p positive_count, m nested_count, amount cents)')
    await engine.exec(`insert into accounts values ('${ID}', 1, 1, 1, 1, 1.50)`)
  })
  after(() => engine?.drop())

  it('a domain over uuid as the id column: a non-uuid id is refused before any statement, failed (never missing)', async () => {
    const calls: UpstreamCall[] = []
    const connector = engine.connector('accounts', { id: 'string', version: 'integer', n: 'number' }, {}, { onCall: (call) => calls.push(call) })
    try {
      const read = await connector.readByIds([ID, 'abc'])
      assert.equal(read.records.get(ID)?.fields.n, 1)
      assert.deepEqual(read.missing, [])
      assert.deepEqual(read.failed.map((f) => f.id), ['abc'])
      assert.match(read.failed[0]!.message, /cannot be a value of id column "id" of table accounts \(account_id\)/)
      assert.deepEqual(calls.filter((c) => c.outcome === 'error'), [], 'no statement failed at the database')
    } finally {
      await connector.close()
    }
  })

  it('number fields over domains over integer types and numeric(p,s): refused before anything is sent, naming the domain and its base type', async () => {
    const connector = engine.connector('accounts', { id: 'string', version: 'integer', n: 'number', p: 'integer', m: 'number', amount: 'number' })
    try {
      const columns = await connector.numberColumns!()
      assert.deepEqual(
        columns?.filter((c) => c.field !== 'version').map((c) => [c.field, c.keeps]),
        [
          ['n', { as: 'integer', min: '-32768', max: '32767' }],
          ['p', { as: 'integer', min: '-2147483648', max: '2147483647' }],
          ['m', { as: 'integer', min: '-32768', max: '32767' }],
          ['amount', { as: 'decimal', digits: 8, scale: 2, asNumber: false }],
        ],
      )
      for (const [field, value, base] of [['n', 40000, 'smallint'], ['n', 12.5, 'smallint'], ['p', 2 ** 31, 'integer'], ['m', 40000, 'smallint'], ['amount', 12.345, 'numeric\\(8,2\\)']] as const) {
        await assert.rejects(connector.write({ id: ID, expectedVersion: '1', set: { [field]: value }, precondition: {} }), (error: any) => {
          assert.equal(error.code, 'invalid_request', error.message)
          assert.match(error.message, new RegExp(`sets "${field}" to ${value} where column "${field}" of table accounts is \\w+ \\(a domain over ${base}.*CHECK.*nothing was written`))
          return true
        })
      }
      assert.deepEqual(await engine.rows('select version, n, p, m, amount from accounts'), [{ version: 1, n: 1, p: 1, m: 1, amount: '1.50' }])
      const written = await connector.write({ id: ID, expectedVersion: '1', set: { n: 32767, m: -32768, amount: 123456.78 }, precondition: {} })
      assert.equal(written.kind, 'written', JSON.stringify(written))
    } finally {
      await connector.close()
    }
  })
})
