import assert from 'node:assert/strict'
import { join } from 'node:path'
import { after, before, describe, test } from 'node:test'
import Database from 'better-sqlite3'
import { createCliWorkspace } from '../support/cli-config.js'

const LONG = 'Northwind Software International Holdings GmbH'
const FORGED = 'ana@example.com\nsub_99999  Forged Row'

/**
 * The terminal tables of `warrant search` and `warrant select` cut a value at the column's width without a mark
 * ("Northwind Software Internati" read as the whole name), and printed a value's line break as is, so a record's
 * text could draw a row of its own that no record has. A cut value ends in "…"; control characters are escaped.
 */
describe('warrant search / select tables: a cut or multi-line value never passes for another (sqlite)', () => {
  let ws: Awaited<ReturnType<typeof createCliWorkspace>>
  before(async () => {
    ws = await createCliWorkspace({ count: 50 })
    const db = new Database(join(ws.dir, 'demo.db'))
    db.prepare("update subscriptions set customer_name = ?, owner = ? where id = 'sub_00001'").run(LONG, FORGED)
    db.close()
  })
  after(async () => {
    await ws?.drop()
  })

  for (const command of ['search', 'select']) {
    test(`warrant ${command}`, async () => {
      const r = await ws.warrant([command, 'subscriptions', '-f', 'id=sub_00001', '-q'].filter((a) => command === 'select' || a !== '-q'))
      assert.equal(r.code, 0, r.stderr)
      const lines = r.stdout.split('\n')
      const row = lines.filter((l) => /^\s*sub_00001\s/.test(l))
      assert.equal(row.length, 1, r.stdout)
      assert.doesNotMatch(r.stdout, /^\s*sub_99999/m, 'no row drawn from a value')
      assert.match(row[0]!, /Northwind Software Intern\S*…/, 'a cut value is marked')
      assert.match(row[0]!, /ana@example\.com\\nsub_9/, 'the line break is shown escaped')
    })
  }
})
