import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { WarrantError, type Filter } from '../../../src/contract/index.js'
import type { SqlConnector } from '../../../src/connectors/sql/index.js'
import { createCursorCodec, searchAll } from '../../../src/inventory/index.js'
import { SQL_KINDS, createUpstream, ledgerConnector, type Upstream } from './support/upstream.js'

/**
 * "Not updated since noon" is the classic bulk-change selector. SQLite keeps timestamps as text in whatever
 * spelling wrote them (its own datetime() writes "2024-06-01 13:00:00") and compared them as text: a space sorts
 * before "T", so a row updated at 13:00 was "before" noon and joined the selection; "…:00.500Z" sorts before
 * "…:00Z". Timestamps now compare by instant on every engine, text that names no instant is named as not judged,
 * and a filter's timestamp that is not ISO-8601 with a zone is refused.
 */
const SQLITE_ROWS: readonly [string, string | number][] = [
  ['a', '2024-06-01 11:00:00'], // SQLite's own spelling, UTC: before noon
  ['b', '2024-06-01 13:00:00'], // after noon, though it sorts before "2024-06-01T12…"
  ['c', '2024-06-01T12:00:00.500Z'], // half a second after noon
  ['d', '2024-06-01T11:59:59.999Z'],
  ['e', '2024-06-01T13:30:00+02:00'], // 11:30 UTC
  ['f', '2024-05-31'], // a date: midnight UTC
  ['g', 'soon'], // names no instant
  ['h', 1717243200], // epoch seconds? milliseconds? names none for sure
]

const NOON = '2024-06-01T12:00:00Z'
const scope = { resource: 'ledger', environment: 'test', visibility: 'all', restricted: false }
const codec = createCursorCodec({ key: 'k'.repeat(32) })

describe('sql on SQLite: timestamps stored in several spellings', () => {
  let upstream: Upstream
  let connector: SqlConnector
  before(async () => {
    upstream = await createUpstream('sqlite')
    await upstream.exec('create table ledger (id text primary key, version integer not null, updated_at text)')
    for (const [id, at] of SQLITE_ROWS) await upstream.exec('insert into ledger (id, version, updated_at) values (?, 1, ?)', [id, at])
    connector = ledgerConnector(upstream.url, { id: 'string', version: 'integer', updated_at: 'timestamp' })
  })
  after(async () => {
    await connector?.close()
    await upstream?.drop()
  })

  const search = (filter: Filter) => searchAll(connector, { resource: 'ledger', filter, pageSize: 3 }, {}, { scope, cursorCodec: codec })

  const cases: [Filter, string[]][] = [
    [{ updated_at: { lt: NOON } }, ['a', 'd', 'e', 'f']],
    [{ updated_at: { gte: NOON } }, ['b', 'c']],
    [{ updated_at: { gt: '2024-06-01T11:30:00.000Z' } }, ['b', 'c', 'd']],
    [{ updated_at: { eq: '2024-06-01T11:30:00Z' } }, ['e']],
    [{ updated_at: { in: ['2024-05-31', '2024-06-01T11:00:00+00:00'] } }, ['a', 'f']],
  ]
  for (const [filter, matching] of cases) {
    it(`${JSON.stringify(filter)}: by instant; the two that name none are named, not judged`, async () => {
      const envelope = await search(filter)
      assert.deepEqual(
        envelope.items.map((r) => r.id),
        matching,
      )
      assert.equal(envelope.complete, false)
      const reason = envelope.incomplete_reasons.find((r) => r.code === 'SHAPE_MISMATCH')
      assert.equal((reason as { record_count?: number } | undefined)?.record_count, 2, JSON.stringify(envelope.incomplete_reasons))
      assert.deepEqual((reason as { fields?: string[] }).fields, ['updated_at'])
    })
  }

  it("a filter's timestamp that names no instant, or a time without a zone, is refused by name; nothing is read", async () => {
    for (const bad of ['yesterday', '2024-06-01T12:00:00', '2024-02-30']) {
      const session = await connector.openSession()
      try {
        await assert.rejects(
          () => session.readPage({ source: 'ledger-db', filter: { updated_at: { lt: bad } }, position: null, pageSize: 10 }),
          (error: unknown) => error instanceof WarrantError && error.code === 'invalid_request' && error.message.includes('ISO-8601'),
          bad,
        )
      } finally {
        await session.close()
      }
    }
  })
})

/** The engines with timestamp types: a bare date in a filter is midnight UTC, not midnight in the session's zone. */
for (const kind of SQL_KINDS.filter((k) => k !== 'sqlite')) {
  describe(`sql on ${kind}: a filter's date is midnight UTC`, () => {
    let upstream: Upstream
    let connector: SqlConnector
    before(async () => {
      upstream = await createUpstream(kind)
      const type = kind === 'postgres' ? 'timestamptz' : 'datetime(3)'
      await upstream.exec(`create table ledger (id varchar(10) primary key, version integer not null, updated_at ${type})`)
      // the connector's sessions run in New York time: PostgreSQL would read a bare date as midnight there
      if (kind === 'postgres') await upstream.exec("do $$ begin execute format('alter database %I set timezone = %L', current_database(), 'America/New_York'); end $$")
      for (const [id, at] of [['a', '2024-05-31T23:30:00.000Z'], ['b', '2024-06-01T00:30:00.000Z'], ['c', '2024-06-01T12:00:00.500Z']] as const)
        await upstream.exec('insert into ledger (id, version, updated_at) values (?, 1, ?)', [id, kind === 'mysql' ? at.replace('T', ' ').replace('Z', '') : at])
      connector = ledgerConnector(upstream.url, { id: 'string', version: 'integer', updated_at: 'timestamp' })
    })
    after(async () => {
      await connector?.close()
      await upstream?.drop()
    })

    it('gte a date and lt noon, by instant', async () => {
      const ids = async (filter: Filter) => (await searchAll(connector, { resource: 'ledger', filter, pageSize: 10 }, {}, { scope, cursorCodec: codec })).items.map((r) => r.id)
      assert.deepEqual(await ids({ updated_at: { gte: '2024-06-01' } }), ['b', 'c'])
      assert.deepEqual(await ids({ updated_at: { lt: NOON } }), ['a', 'b'])
      assert.deepEqual(await ids({ updated_at: { gt: '2024-06-01T14:00:00+02:00' } }), ['c'])
    })
  })
}
