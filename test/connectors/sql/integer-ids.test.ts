import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import type { SourceRecord } from '../../../src/connectors/connector.js'
import type { SqlConnector } from '../../../src/connectors/sql/index.js'
import { createUpstream, ledgerConnector, SQL_KINDS, type Upstream } from './support/upstream.js'

/**
 * Ids around and past 2^53, which a JavaScript number cannot all hold: 2^53 + 1 rounds to 2^53, the id of
 * another row. The names end with the id's last two digits, so a record shown under the wrong id is caught.
 */
const IDS = ['9007199254740992', '9007199254740993', '9007199254740995', '9223372036854775807']
const nameOf = (id: string) => `n${id.slice(-2)}`

const TABLE = {
  sqlite: 'create table ledger (id integer primary key, version integer not null, name text)',
  postgres: 'create table ledger (id bigint primary key, version integer not null, name text)',
  mysql: 'create table ledger (id bigint primary key, version int not null, name varchar(50))',
} as const

/**
 * A table keyed by 64-bit integers (not the demo's text ids), on every engine. Before, on SQLite the driver
 * rounded 2^53 + 1 to 2^53: the record of row "…93" came out under the id of row "…92", a walk never got past
 * it, and a write meant for one went to the other; on PostgreSQL and MySQL the ids read were exact but a write
 * sent the id as a rounded number. Every id must be read, shown and written exactly as stored.
 */
for (const kind of SQL_KINDS) {
  describe(`sql connector on ${kind}: 64-bit integer ids`, () => {
    let upstream: Upstream
    let connector: SqlConnector
    before(async () => {
      upstream = await createUpstream(kind)
      await upstream.exec(TABLE[kind])
      for (const id of IDS) await upstream.exec(`insert into ledger (id, version, name) values (${id}, 1, '${nameOf(id)}')`)
      connector = ledgerConnector(upstream.url, { id: 'integer', version: 'integer', name: 'string' })
    })
    after(async () => {
      await connector?.close()
      await upstream?.drop()
    })

    const walk = async (pageSize: number): Promise<SourceRecord[]> => {
      const session = await connector.openSession()
      const records: SourceRecord[] = []
      try {
        let position: string | null = null
        for (let page = 0; page < 20; page++) {
          const result = await session.readPage({ source: 'ledger-db', filter: {}, position, pageSize })
          assert.equal(result.kind, 'page', JSON.stringify(result))
          if (result.kind !== 'page') break
          records.push(...result.items)
          if (result.next === null) break
          position = result.next
        }
      } finally {
        await session.close()
      }
      return records
    }

    for (const pageSize of [1, 3]) {
      it(`a walk in pages of ${pageSize} returns every id once, exactly as stored, each with its own row`, async () => {
        const records = await walk(pageSize)
        assert.deepEqual(
          records.map((r) => r.id),
          IDS,
        )
        for (const r of records) {
          assert.equal(r.fields.name, nameOf(r.id), 'the record is the row of its id')
          // the id field itself: a number where a number holds it exactly, else the exact digits
          assert.equal(String(r.fields.id), r.id)
          assert.equal(typeof r.fields.id, Number.isSafeInteger(Number(r.id)) ? 'number' : 'string')
          assert.equal(r.fields.version, 1)
        }
      })
    }

    it('a read by id finds the row of that id, not its rounded neighbour', async () => {
      const read = await connector.readByIds(['9007199254740993', '9223372036854775807'])
      assert.deepEqual(read.missing, [])
      assert.equal(read.records.get('9007199254740993')?.fields.name, 'n93')
      assert.equal(read.records.get('9223372036854775807')?.fields.name, 'n07')
    })

    it('a write reaches the row of its id and no other', async () => {
      const outcome = await connector.write({ id: '9007199254740993', expectedVersion: '1', set: { name: 'written' }, precondition: {} })
      assert.equal(outcome.kind, 'written', JSON.stringify(outcome))
      if (outcome.kind === 'written') assert.equal(outcome.record?.id, '9007199254740993')
      const byId = new Map((await walk(10)).map((r) => [r.id, r]))
      assert.equal(byId.get('9007199254740993')?.fields.name, 'written')
      assert.equal(byId.get('9007199254740993')?.version, '2')
      assert.equal(byId.get('9007199254740992')?.fields.name, 'n92', 'the neighbour 2^53 is untouched')
      assert.equal(byId.get('9007199254740992')?.version, '1')
    })

    if (kind !== 'mysql')
      it('a window written as one statement reaches exactly its rows', async () => {
        const outcomes = await connector.writeWindow!(['9007199254740995', '9223372036854775807'].map((id) => ({ id, expectedVersion: '1', set: { name: 'window' }, precondition: {} })))
        assert.deepEqual(
          outcomes.map((o) => [o.kind, o.kind === 'written' ? o.record?.id : null]),
          [
            ['written', '9007199254740995'],
            ['written', '9223372036854775807'],
          ],
        )
        const byId = new Map((await walk(10)).map((r) => [r.id, r]))
        assert.deepEqual(
          IDS.map((id) => [id, byId.get(id)?.fields.name, byId.get(id)?.version]),
          [
            ['9007199254740992', 'n92', '1'],
            ['9007199254740993', 'written', '2'],
            ['9007199254740995', 'window', '2'],
            ['9223372036854775807', 'window', '2'],
          ],
        )
      })
  })
}
