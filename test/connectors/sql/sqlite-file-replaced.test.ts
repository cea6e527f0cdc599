import assert from 'node:assert/strict'
import { rename, unlink } from 'node:fs/promises'
import { join } from 'node:path'
import { afterEach, describe, it } from 'node:test'
import BetterSqlite3 from 'better-sqlite3'
import { resourceSchema } from '../../../src/config/index.js'
import { createSqlConnector, type SqlConnector } from '../../../src/connectors/sql/index.js'
import type { WriteRequest } from '../../../src/connectors/index.js'
import { createTempDir } from '../../support/stores.js'

/**
 * A SQLite upstream whose file is removed, or replaced by another (a backup restored with `mv other.db demo.db`),
 * after the connector opened it. An open handle keeps reading and writing the old inode, which no longer is at
 * the path: writes answered `written` that nobody will ever see, reads of a database that is not there. The
 * connector compares the path's device and inode with those of the file it opened, before each statement outside
 * a transaction and before each COMMIT: reads and writes reopen on the file the path now names (a write is
 * conditional on the version it read there), a file gone is `not_sent`, and a walk that began on the old file
 * stops, not complete, rather than go on with a file no longer there.
 */
const FIELDS = { id: 'string', name: 'string', version: 'integer' }

function makeFile(path: string, name: string, version: number, journal: 'wal' | 'delete'): void {
  const db = new BetterSqlite3(path)
  db.pragma(`journal_mode = ${journal}`)
  db.exec('create table things (id text primary key, name text, version integer not null)')
  const insert = db.prepare('insert into things values (?, ?, ?)')
  for (let i = 1; i <= 5; i++) insert.run(`row_${i}`, name, version)
  db.close()
}

function rowsOf(path: string): { id: string; name: string; version: number }[] {
  const db = new BetterSqlite3(path, { readonly: true, fileMustExist: true })
  try {
    return db.prepare('select id, name, version from things order by id').all() as { id: string; name: string; version: number }[]
  } finally {
    db.close()
  }
}

const opened: SqlConnector[] = []
const cleanups: (() => Promise<unknown>)[] = []
afterEach(async () => {
  await Promise.all(opened.splice(0).map((c) => c.close()))
  for (const cleanup of cleanups.splice(0)) await cleanup()
})

async function setup(journal: 'wal' | 'delete') {
  const dir = await createTempDir('warrant-sqlite-replaced-')
  cleanups.push(() => dir.drop())
  const demo = join(dir.path, 'demo.db')
  const other = join(dir.path, 'other.db')
  makeFile(demo, 'demo', 1, journal)
  makeFile(other, 'restored', 7, journal)
  const connector = createSqlConnector({
    resource: resourceSchema.parse({
      environment: { name: 'test' },
      connector: { kind: 'sql', url: `sqlite:${demo}`, table: 'things', source: 'things-db', write_window: 10 },
      fields: FIELDS,
      version_field: 'version',
      review_fields: ['id'],
    }),
  })
  opened.push(connector)
  // the connector opens the file and reads it: its shared connection is now on demo.db's inode
  const first = await connector.readByIds(['row_1'])
  assert.equal(first.records.get('row_1')?.fields.name, 'demo', JSON.stringify(first.failed))
  return { demo, other, connector }
}

const write = (id: string, expectedVersion: string, name = 'after'): WriteRequest => ({ id, expectedVersion, set: { name }, precondition: {} })

for (const journal of ['delete', 'wal'] as const) {
  describe(`sqlite upstream whose file is replaced or removed under the connector (journal_mode ${journal})`, () => {
    it('replaced (mv other.db demo.db): reads by id and writes go to the file the path now names', async () => {
      const { demo, other, connector } = await setup(journal)
      await rename(other, demo)
      const read = await connector.readByIds(['row_1'])
      assert.equal(read.records.get('row_1')?.fields.name, 'restored', 'a read by id describes the file at the path')
      assert.equal(read.records.get('row_1')?.version, '7')
      // a write at the version the old file had matches nothing in the file at the path
      const stale = await connector.write(write('row_1', '1'))
      assert.equal(stale.kind, 'conflict', JSON.stringify(stale))
      const outcome = await connector.write(write('row_1', '7'))
      assert.equal(outcome.kind, 'written', JSON.stringify(outcome))
      assert.deepEqual(rowsOf(demo)[0], { id: 'row_1', name: 'after', version: 8 }, 'the write is in the file at the path')
      const window = await connector.writeWindow!([write('row_2', '7'), write('row_3', '7')])
      assert.deepEqual(
        window.map((o) => o.kind),
        ['written', 'written'],
      )
      assert.deepEqual(
        rowsOf(demo).map((r) => r.name),
        ['after', 'after', 'after', 'restored', 'restored'],
      )
    })

    it('removed: a write is not_sent, saying the file is gone, and so is every request of a window', async () => {
      const { demo, connector } = await setup(journal)
      await unlink(demo)
      const outcome = await connector.write(write('row_1', '1'))
      assert.equal(outcome.kind, 'not_sent', JSON.stringify(outcome))
      assert.match(outcome.kind === 'not_sent' ? outcome.message : '', /no longer at sqlite:.*demo\.db \(removed since it was opened\).*no statement was sent, so nothing was written$/)
      const window = await connector.writeWindow!([write('row_2', '1'), write('row_3', '1')])
      assert.deepEqual(
        window.map((o) => o.kind),
        ['not_sent', 'not_sent'],
        JSON.stringify(window),
      )
      const read = await connector.readByIds(['row_1'])
      assert.equal(read.records.size, 0, 'nothing is read from a file no longer at the path')
      assert.match(read.failed[0]?.message ?? '', /no longer at/, JSON.stringify(read))
    })

    it('a walk that began on the old file does not go on over it: its next page is cursor_expired, saying the file changed', async () => {
      const { demo, other, connector } = await setup(journal)
      const session = await connector.openSession()
      const first = await session.readPage({ source: 'things-db', filter: {}, position: null, pageSize: 2 })
      assert.equal(first.kind, 'page')
      const next = first.kind === 'page' ? first.next : null
      assert.ok(next)
      await rename(other, demo)
      const second = await session.readPage({ source: 'things-db', filter: {}, position: next, pageSize: 2 })
      assert.equal(second.kind, 'cursor_expired', JSON.stringify(second))
      assert.match(second.kind === 'cursor_expired' ? second.message : '', /was replaced since this walk began: its snapshot is of a file no longer there/)
      await session.close()
      // a new walk reads the file at the path
      const fresh = await connector.openSession()
      const page = await fresh.readPage({ source: 'things-db', filter: {}, position: null, pageSize: 10 })
      assert.equal(page.kind, 'page')
      assert.deepEqual(
        page.kind === 'page' ? page.items.map((r) => r.fields.name) : [],
        ['restored', 'restored', 'restored', 'restored', 'restored'],
      )
      await fresh.close()
    })
  })
}
