import assert from 'node:assert/strict'
import { join } from 'node:path'
import { after, before, describe, test } from 'node:test'
import Database from 'better-sqlite3'
import { type CliWorkspace, createCliWorkspace } from '../support/cli-config.js'

/**
 * `--filter 'customer_name=Acme, Inc'` was read as "Acme" or " Inc": a comma always split the value into a list,
 * and no spelling kept it. The search answered COMPLETE, 0 records, "that proves absence", and "For a change based
 * on absence: proceed", over a table holding that customer. A comma inside a value is written `\,`; a list item
 * with a space at either end or empty (the sign of a comma that belonged to the value) is refused, naming it.
 */
describe('warrant search / select: a comma inside a filter value never passes for a list (real process, sqlite)', () => {
  let ws: CliWorkspace
  before(async () => {
    ws = await createCliWorkspace({ count: 20 })
    const db = new Database(join(ws.dir, 'demo.db'))
    db.prepare("update subscriptions set customer_name = 'Acme, Inc' where id = 'sub_00004'").run()
    db.close()
  })
  after(async () => {
    await ws?.drop()
  })

  for (const command of ['search', 'select']) {
    test(`warrant ${command}: "Acme, Inc" is refused, naming the item and how to write the comma`, { timeout: 60_000 }, async () => {
      const r = await ws.warrant([command, 'subscriptions', '-f', 'customer_name=Acme, Inc', ...(command === 'select' ? ['-q'] : [])])
      assert.equal(r.code, 2, `${r.stdout}\n${r.stderr}`)
      assert.equal(r.stdout, '')
      assert.match(r.stderr, /invalid_request: cannot read filter "customer_name=Acme, Inc": " Inc" .*\\,/, r.stderr)
    })
  }

  test('an empty item of a list is refused, on = and !=', { timeout: 60_000 }, async () => {
    for (const term of ['status=active,', 'status!=,active']) {
      const r = await ws.warrant(['search', 'subscriptions', '-f', term])
      assert.equal(r.code, 2, `${term}: ${r.stdout}\n${r.stderr}`)
      assert.match(r.stderr, /empty/, r.stderr)
    }
  })

  test('`\\,` is a comma inside the value: the record is found', { timeout: 60_000 }, async () => {
    const r = await ws.warrant(['search', 'subscriptions', '-f', 'customer_name=Acme\\, Inc', '--json'])
    assert.equal(r.code, 0, r.stderr)
    const envelope = JSON.parse(r.stdout)
    assert.deepEqual(envelope.items.map((i: any) => i.id), ['sub_00004'])
    const list = JSON.parse((await ws.warrant(['search', 'subscriptions', '-f', 'customer_name=Acme\\, Inc,nobody', '--json'])).stdout)
    assert.deepEqual(list.items.map((i: any) => i.id), ['sub_00004'], 'and within a list')
  })
})
