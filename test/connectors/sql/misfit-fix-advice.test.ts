import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import type { SqlConnector } from '../../../src/connectors/sql/index.js'
import { checkResource } from '../../../src/checks/index.js'
import { createUpstream, ledgerConnector, ledgerResource, type Upstream } from './support/upstream.js'

/**
 * `warrant check`'s field_types told every misfit field to "declare the field as the column is, or change the
 * column", even where no declared type reads the column as the database compares it (a PostgreSQL text[]): advice
 * no config could follow. It now names the declared types that fit the column (`misfitOf` null), or says none does
 * and that filters on the field are refused. `timestamp` was taken to fit any column but a number one, so a boolean
 * or an array column was "fit" for timestamps: it now fits no boolean, JSON or other column on PostgreSQL/MySQL.
 * A real PostgreSQL table with text[], jsonb, boolean and date columns.
 */
describe('sql on postgres: the fix field_types gives a misfit field', () => {
  let upstream: Upstream
  let connector: SqlConnector
  const FIELDS = { id: 'string', version: 'integer', arr: 'string', doc: 'string', flag: 'integer', day: 'integer' } as const
  before(async () => {
    upstream = await createUpstream('postgres')
    await upstream.exec('create table ledger (id text primary key, version integer not null, arr text[], doc jsonb, flag boolean, day date)')
    await upstream.exec(`insert into ledger values ('a', 1, '{x,y}', '["x"]', true, '2026-01-01')`)
    connector = ledgerConnector(upstream.url, FIELDS)
  })
  after(async () => {
    await connector?.close()
    await upstream?.drop()
  })

  it('names the declared types that fit, or says none does and that filters on it are refused', async () => {
    const report = await checkResource({ name: 'ledger', config: ledgerResource(upstream.url, FIELDS), connector })
    const guarantee = report.guarantees.find((g) => g.name === 'field_types')
    assert.equal(guarantee?.status, 'fails_closed', JSON.stringify(guarantee))
    assert.deepEqual(guarantee?.config_keys, ['fields.arr', 'fields.doc', 'fields.flag', 'fields.day'])
    const detail = guarantee!.detail
    const of = (field: string) => detail.split('; field ').find((part) => part.includes(`"${field}" is declared`)) ?? assert.fail(`${field} not named: ${detail}`)
    assert.doesNotMatch(detail, /declare the field as the column is/)
    assert.match(of('arr'), /no declared type reads a text\[\] column as the database compares it: filters on it are refused \(leave the field out of `fields` if no filter needs it, or change the column\)/)
    assert.match(of('doc'), /declare it tags\b/)
    assert.match(of('flag'), /declare it one of string or boolean\b/)
    assert.doesNotMatch(of('flag'), /timestamp/)
    assert.match(of('day'), /declare it timestamp\b/)
  })

  it('a timestamp field over a boolean, jsonb or array column is a misfit; over a date or text column it is not', async () => {
    const fields = { id: 'timestamp', version: 'integer', arr: 'timestamp', doc: 'timestamp', flag: 'timestamp', day: 'timestamp' } as const
    const stamped = ledgerConnector(upstream.url, fields)
    try {
      const misfits = await stamped.fieldTypeMisfits!()
      assert.deepEqual(misfits?.map((m) => m.field).sort(), ['arr', 'doc', 'flag'])
    } finally {
      await stamped.close()
    }
  })
})
