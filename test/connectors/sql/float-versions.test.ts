import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { checkResource } from '../../../src/checks/index.js'
import type { SqlConnector } from '../../../src/connectors/sql/index.js'
import { createEngine, type Engine, type Kind } from './support/engine.js'
import { pausableResource } from './support/upstream.js'

/**
 * An integer version over a floating-point column keeps integers exactly only up to 2^24 (PostgreSQL real) or 2^53
 * (SQLite REAL, PostgreSQL double precision). On PostgreSQL real a row at version 16777216 was written: `version + 1`
 * rounded back to 16777216, the statement committed, and only then was the target answered `unknown` (the write
 * made, a writer still holding 16777216 free to overwrite it). The catalogue says so before anything is sent: every
 * write is refused, naming the fix, and `warrant check` reports it on conditional_writes. MySQL/MariaDB FLOAT and
 * DOUBLE (REAL, FLOAT(30) and UNSIGNED among them, as the catalogue names them) the same.
 */
const COLUMNS: Readonly<Partial<Record<Kind, readonly string[]>>> = {
  sqlite: ['real', 'double precision', 'float'],
  postgres: ['real', 'double precision', 'exact_double'],
  mysql: ['float', 'double', 'float(30)', 'real', 'double unsigned'],
}
const FIELDS = { id: 'string', status: 'string', version: 'integer' } as const

const configFor = (url: string, table: string) => pausableResource(url, table, 'things-db', FIELDS)

for (const kind of ['sqlite', 'postgres', 'mysql'] as const) {
  for (const column of COLUMNS[kind]!) {
    describe(`sql on ${kind}: an integer version over a ${column} column`, () => {
      let engine: Engine
      let connector: SqlConnector
      const statuses = async () => (await engine.rows(`select id, status, version from things order by id`)).map((r) => `${r.id}:${r.status}:${r.version}`)
      before(async () => {
        engine = await createEngine(kind)
        // a domain over double precision is as floating as the type itself
        if (column === 'exact_double') await engine.exec(`create domain exact_double as double precision`)
        const id = kind === 'mysql' ? 'varchar(20)' : 'text'
        await engine.exec(`create table things (id ${id} primary key, status text, version ${column} not null)`)
        await engine.exec(`create table counted (id ${id} primary key, status text, version bigint not null)`)
        for (const table of ['things', 'counted']) await engine.exec(`insert into ${table} (id, status, version) values ('a', 'active', 16777216), ('b', 'active', 1), ('c', 'active', 1)`)
        connector = engine.connector('things', FIELDS, { review_fields: ['id', 'status'] })
      })
      after(async () => {
        await engine?.drop()
      })

      it('a write is refused before anything is written, naming the column and the fix', async () => {
        const before = await statuses()
        for (const [id, version] of [['a', '16777216'], ['b', '1']] as const) {
          const outcome = await connector.write({ id, expectedVersion: version, set: { status: 'paused' }, precondition: {} })
          assert.equal(outcome.kind, 'rejected', JSON.stringify(outcome))
          const message = outcome.kind === 'rejected' ? outcome.message : ''
          assert.match(message, /version column "version" of table things is .*floating-point.*2\^24.*2\^53/)
          assert.match(message, /declare the column an integer type \(bigint\).*nothing was written/)
        }
        assert.deepEqual(await statuses(), before)
      })

      // MySQL has no write window (no UPDATE … RETURNING): its targets go one at a time, as above
      it('a window is refused the same way, every target', { skip: kind === 'mysql' ? 'MySQL writes one target at a time' : false }, async () => {
        const before = await statuses()
        const outcomes = await connector.writeWindow!(['b', 'c'].map((id) => ({ id, expectedVersion: '1', set: { status: 'paused' }, precondition: {} })))
        for (const outcome of outcomes) assert.match(outcome.kind === 'rejected' ? outcome.message : JSON.stringify(outcome), /floating-point.*nothing was written/)
        assert.deepEqual(await statuses(), before)
      })

      it('warrant check reports it on conditional_writes', async () => {
        const report = await checkResource({ name: 'things', config: configFor(engine.url, 'things'), connector })
        const guarantee = report.guarantees.find((g) => g.name === 'conditional_writes')
        assert.equal(guarantee?.status, 'fails_closed', JSON.stringify(guarantee))
        assert.deepEqual(guarantee?.config_keys, ['version_field'])
        assert.match(guarantee?.detail ?? '', /floating-point/)
        assert.notEqual(report.verdict, 'holds')
      })

      it('an integer column is written as before, past 2^24', async () => {
        const counted = engine.connector('counted', FIELDS)
        const outcome = await counted.write({ id: 'a', expectedVersion: '16777216', set: { status: 'paused' }, precondition: {} })
        assert.equal(outcome.kind, 'written', JSON.stringify(outcome))
        assert.equal(outcome.kind === 'written' && outcome.record?.version, '16777217')
      })
    })
  }
}
