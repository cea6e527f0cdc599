import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { checkResource } from '../../../src/checks/index.js'
import { createSqlConnector, type SqlConnector } from '../../../src/connectors/sql/index.js'
import { createUpstream, mysqlParam, pausableResource, type Kind, type Upstream } from './support/upstream.js'

/**
 * A timestamp version column that keeps whole seconds (PostgreSQL `timestamptz(0)`, MySQL `datetime`): the
 * next version, a millisecond or so later, is rounded back to the same second, so the version does not move.
 * PostgreSQL answered such a write `written`, and a second writer holding the same, now stale, version wrote
 * too (a lost update). The catalogue says so before anything is written: every write to it is refused, naming
 * the fix, and `warrant check` reports it on the version_field line.
 */
const COARSE: Partial<Record<Kind, { column: string; fix: RegExp }>> = {
  postgres: { column: 'timestamptz(0)', fix: /alter table ledger alter column version type timestamptz\(3\)/ },
  mysql: { column: 'datetime', fix: /alter table ledger modify version datetime\(3\)/ },
}
const FIELDS = { id: 'string', status: 'string', version: 'timestamp' } as const
const V0 = '2024-06-01T12:00:00.000Z'

const resourceFor = (url: string, table: string) => pausableResource(url, table, 'ledger-db', FIELDS)

for (const kind of ['postgres', 'mysql'] as const) {
  describe(`sql on ${kind}: a timestamp version column that keeps whole seconds`, () => {
    let upstream: Upstream
    let connector: SqlConnector
    const param = (v: string) => (kind === 'mysql' ? mysqlParam(v) : v)
    const statusOf = async (id: string) => {
      const probe = createSqlConnector({ resource: resourceFor(upstream.url, 'ledger') })
      try {
        const read = await probe.readByIds([id])
        return read.records.get(id)?.fields.status
      } finally {
        await probe.close()
      }
    }
    before(async () => {
      upstream = await createUpstream(kind)
      await upstream.exec(`create table ledger (id varchar(20) primary key, status varchar(20), version ${COARSE[kind]!.column} not null)`)
      await upstream.exec(`create table fine (id varchar(20) primary key, status varchar(20), version ${kind === 'postgres' ? 'timestamptz(3)' : 'datetime(3)'} not null)`)
      for (const table of ['ledger', 'fine']) for (const id of ['a', 'b', 'c']) await upstream.exec(`insert into ${table} values (?, ?, ?)`, [id, 'active', param(V0)])
      // Warrant's clock 200 ms after the application last wrote the rows: the next version rounds back to V0
      connector = createSqlConnector({ resource: resourceFor(upstream.url, 'ledger'), now: () => new Date(Date.parse(V0) + 200) })
    })
    after(async () => {
      await connector?.close()
      await upstream?.drop()
    })

    it('a write is refused before anything is written, naming the fix; a second stale write cannot go through', async () => {
      for (const status of ['paused', 'cancelled']) {
        const outcome = await connector.write({ id: 'a', expectedVersion: V0, set: { status }, precondition: {} })
        assert.equal(outcome.kind, 'rejected', JSON.stringify(outcome))
        const message = outcome.kind === 'rejected' ? outcome.message : ''
        assert.match(message, /version column "version" of table ledger .* keeps whole seconds/)
        assert.match(message, COARSE[kind]!.fix)
        assert.match(message, /nothing was written/)
      }
      assert.equal(await statusOf('a'), 'active')
    })

    it('a window is refused the same way, every target', { skip: kind === 'mysql' ? 'MySQL writes one target at a time' : false }, async () => {
      const outcomes = await connector.writeWindow!(['b', 'c'].map((id) => ({ id, expectedVersion: V0, set: { status: 'paused' }, precondition: {} })))
      for (const outcome of outcomes) assert.match(outcome.kind === 'rejected' ? outcome.message : JSON.stringify(outcome), /keeps whole seconds.*nothing was written/)
      assert.deepEqual([await statusOf('b'), await statusOf('c')], ['active', 'active'])
    })

    it('a column that keeps milliseconds is written as before', async () => {
      const fine = createSqlConnector({ resource: resourceFor(upstream.url, 'fine'), now: () => new Date(Date.parse(V0) + 200) })
      try {
        const outcome = await fine.write({ id: 'a', expectedVersion: V0, set: { status: 'paused' }, precondition: {} })
        assert.equal(outcome.kind, 'written', JSON.stringify(outcome))
        assert.equal(outcome.kind === 'written' && outcome.record?.version, '2024-06-01T12:00:00.200Z')
      } finally {
        await fine.close()
      }
    })

    it('warrant check reports it on the version_field line', async () => {
      const report = await checkResource({ name: 'ledger', config: resourceFor(upstream.url, 'ledger'), connector })
      const guarantee = report.guarantees.find((g) => g.name === 'conditional_writes')
      assert.equal(guarantee?.status, 'fails_closed', JSON.stringify(guarantee))
      assert.deepEqual(guarantee?.config_keys, ['version_field'])
      assert.match(guarantee?.detail ?? '', /keeps whole seconds/)
      assert.notEqual(report.verdict, 'holds')
    })
  })
}
