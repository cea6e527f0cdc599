import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { type CliWorkspace, createCliWorkspace } from '../support/cli-config.js'

/**
 * The filter grammar skips spaces between a field and its operator, but kept those after it: `-f 'status = past_due'`
 * asked for the status " past_due", and the search answered COMPLETE, 0 records, "that proves absence" over a table
 * full of past_due subscriptions. A text value with a space at either end is refused, naming it; numbers, where a
 * space cannot change the value, are read as before.
 */
describe('warrant search / select: a text filter value with a space at either end is refused (real process, sqlite)', () => {
  let ws: CliWorkspace
  before(async () => {
    ws = await createCliWorkspace({ count: 50 })
  })
  after(async () => {
    await ws?.drop()
  })

  for (const command of ['search', 'select'])
    for (const term of ['status = past_due', 'status=past_due ', 'status=null ', 'status!= active', 'customer_name> A'])
      test(`warrant ${command} -f '${term}'`, { timeout: 60_000 }, async () => {
        const r = await ws.warrant([command, 'subscriptions', '-f', term, ...(command === 'select' ? ['-q'] : [])])
        assert.equal(r.code, 2, `${r.stdout}\n${r.stderr}`)
        assert.equal(r.stdout, '')
        assert.match(r.stderr, /invalid_request: cannot read filter ".*": ".*" has a space at its (start|end)/, r.stderr)
      })

  test('a number bound with spaces around its operator is still read', { timeout: 60_000 }, async () => {
    const r = await ws.warrant(['search', 'subscriptions', '-f', 'amount_due >= 100', '--json'])
    assert.equal(r.code, 0, r.stderr)
    assert.ok(JSON.parse(r.stdout).items.length > 0)
  })
})
