import assert from 'node:assert/strict'
import { join } from 'node:path'
import { after, before, describe, test } from 'node:test'
import Database from 'better-sqlite3'
import { type CliWorkspace, createCliWorkspace } from '../support/cli-config.js'

const A = 'sub_customer_northwind_2024_invoice_A'
const B = 'sub_customer_northwind_2024_invoice_B'
const NAME_A = 'Northwind Software International Holdings GmbH (Berlin)'
const NAME_B = 'Northwind Software International Holdings GmbH (Munich)'

/**
 * The terminal tables cut every value at 28 columns with a closing "…": two record ids (or names) sharing their
 * first 27 characters printed as the same cell, `sub_customer_northwind_2024…` twice, so a reader saw one record
 * listed twice where there are two. A column is cut only where its distinct values still read apart.
 */
describe('warrant search / select tables: two values never cut to the same cell (real process, sqlite)', () => {
  let ws: CliWorkspace
  before(async () => {
    ws = await createCliWorkspace({ count: 20 })
    const db = new Database(join(ws.dir, 'demo.db'))
    db.prepare("update subscriptions set id = ?, customer_name = ? where id = 'sub_00001'").run(A, NAME_A)
    db.prepare("update subscriptions set id = ?, customer_name = ? where id = 'sub_00002'").run(B, NAME_B)
    db.close()
  })
  after(async () => {
    await ws?.drop()
  })

  for (const command of ['search', 'select']) {
    test(`warrant ${command}`, { timeout: 60_000 }, async () => {
      const r = await ws.warrant([command, 'subscriptions', '-f', `id=${A},${B}`, ...(command === 'select' ? ['-q'] : [])])
      assert.equal(r.code, 0, r.stderr)
      const rows = r.stdout.split('\n').filter((l) => /^\s*sub_customer/.test(l))
      assert.equal(rows.length, 2, r.stdout)
      const cells = rows.map((row) => row.trim().split(/\s{2,}/))
      assert.notEqual(cells[0]![0], cells[1]![0], `the two ids print apart:\n${r.stdout}`)
      assert.notEqual(cells[0]![1], cells[1]![1], `the two names print apart:\n${r.stdout}`)
      // the header still sits over its column: every row is as wide as the header line up to the last column
      const header = r.stdout.split('\n').find((l) => /^\s*id\s+customer_name/.test(l))!
      assert.equal(rows[0]!.indexOf(cells[0]![1]!), header.indexOf('customer_name'), r.stdout)
    })
  }
})
