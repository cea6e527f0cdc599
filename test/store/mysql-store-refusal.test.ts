import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { createCliWorkspace } from '../support/cli-config.js'

/** MySQL/MariaDB is an upstream, not a store: the CLI says so in one line, never with a stack trace. */
describe('a mysql:// store is refused', () => {
  let ws: Awaited<ReturnType<typeof createCliWorkspace>>
  before(async () => {
    ws = await createCliWorkspace({ count: 20, edit: (raw) => void (raw.store = 'mysql://root:hunter2@127.0.0.1:3306/warrant') })
  })
  after(async () => {
    await ws?.drop()
  })

  for (const args of [['search', 'subscriptions'], ['serve', '--port', '0']]) {
    it(`warrant ${args[0]}: exit 2, one line naming the supported stores, no password`, async () => {
      const result = await ws.warrant(args)
      assert.equal(result.code, 2, result.stderr)
      const lines = result.stderr.trim().split('\n')
      assert.equal(lines.length, 1, result.stderr)
      assert.match(lines[0]!, /^warrant: invalid_request: .*the store is SQLite or PostgreSQL; MySQL\/MariaDB can be a sql upstream/)
      assert.ok(!result.stderr.includes('hunter2') && !/\n\s+at /.test(result.stderr))
      assert.equal(result.stdout, '')
    })
  }
})
