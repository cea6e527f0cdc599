import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { createCliWorkspace } from '../support/cli-config.js'

/**
 * A SQLite store file that cannot be written (an immutable file here: root ignores permission bits, never
 * `chattr +i`). SQLite opens such a file read-only without a word, so the first write said "internal error:
 * attempt to write a readonly database … this is a bug in Warrant". It is refused when the store opens, in one
 * line naming the store and why.
 */
describe('a read-only SQLite store', () => {
  let ws: Awaited<ReturnType<typeof createCliWorkspace>>
  let file: string
  before(async () => {
    ws = await createCliWorkspace({ count: 20 })
    // the store made and migrated, then frozen
    assert.equal((await ws.warrant(['search', 'subscriptions'])).code, 0)
    file = join(ws.dir, 'warrant.db')
    execFileSync('chattr', ['+i', file])
  })
  after(async () => {
    if (file) execFileSync('chattr', ['-i', file])
    await ws?.drop()
  })

  for (const args of [['search', 'subscriptions'], ['serve', '--port', '0']]) {
    it(`warrant ${args[0]}: exit 4, one line saying the store cannot be written`, async () => {
      const result = await ws.warrant(args)
      assert.equal(result.code, 4, result.stderr)
      const lines = result.stderr.trim().split('\n')
      assert.equal(lines.length, 1, result.stderr)
      assert.match(lines[0]!, /^warrant: store_unavailable: SQLite store ".*warrant\.db" cannot be written \(a read-only file, folder or file system\)/)
      assert.equal(result.stdout, '')
    })
  }
})
