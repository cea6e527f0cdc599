import assert from 'node:assert/strict'
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, it } from 'node:test'
import { createCliWorkspace } from '../support/cli-config.js'
import { TEST_POSTGRES_ADMIN_URL } from '../support/stores.js'

/**
 * A store that cannot be opened, refused as the store's failure in one line, exit 4, never as a bug nor as an
 * upstream's: a config whose SQLite store path names a file that is no SQLite database (a text file, a damaged
 * store) said "internal error: file is not a database … this is a bug in Warrant", exit 1; a PostgreSQL store
 * whose database does not exist said `upstream_unavailable`, the code of the APIs Warrant reaches.
 */
describe('a store that cannot be opened', () => {
  for (const args of [['search', 'subscriptions'], ['serve', '--port', '0']]) {
    it(`warrant ${args[0]} on a store path holding no SQLite database: exit 4, one line naming the file, the file untouched`, async () => {
      const ws = await createCliWorkspace({ count: 20 })
      try {
        const file = join(ws.dir, 'warrant.db')
        const text = 'notes, not a database\n'.repeat(20)
        writeFileSync(file, text)
        const result = await ws.warrant(args)
        assert.equal(result.code, 4, result.stderr)
        const lines = result.stderr.trim().split('\n')
        assert.equal(lines.length, 1, result.stderr)
        assert.match(lines[0]!, /^warrant: store_unavailable: SQLite store ".*warrant\.db" is not a SQLite database \(file is not a database\)/)
        assert.equal(readFileSync(file, 'utf8'), text)
      } finally {
        await ws.drop()
      }
    })
  }

  it('warrant serve on a PostgreSQL store whose database does not exist: exit 4, store_unavailable naming it', async () => {
    const url = new URL(TEST_POSTGRES_ADMIN_URL)
    url.pathname = '/warrant_no_such_store_db'
    const ws = await createCliWorkspace({ count: 20, edit: (raw) => (raw.store = url.toString()) })
    try {
      const result = await ws.warrant(['serve', '--port', '0'])
      assert.equal(result.code, 4, result.stderr)
      assert.match(result.stderr.trim(), /^warrant: store_unavailable: cannot connect to PostgreSQL store ".*warrant_no_such_store_db": database "warrant_no_such_store_db" does not exist \(3D000\)$/)
    } finally {
      await ws.drop()
    }
  })
})
