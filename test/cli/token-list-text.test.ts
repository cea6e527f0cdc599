import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { join } from 'node:path'
import BetterSqlite3 from 'better-sqlite3'
import { createCliWorkspace } from '../support/cli-config.js'

const FORGED_NAME = 'mallory\ntok_00000000  admin     principal=root\x1b[2J'

/**
 * `warrant token list` on a store without tokens printed nothing at all (exit 0): "no tokens" could not be told
 * from a command that printed nothing because it broke. It says so in a line. A principal's name is the creator's
 * text: a newline drew a token line no token has (an admin `root`), and an escape sequence reached the terminal;
 * it is shown escaped, as table cells are (a name stored before names were checked at creation).
 */
describe('warrant token list: an empty list says so; a name never draws a line (sqlite)', () => {
  let ws: Awaited<ReturnType<typeof createCliWorkspace>>
  before(async () => {
    ws = await createCliWorkspace({ count: 10 })
  })
  after(async () => {
    await ws?.drop()
  })

  test('no token yet: one line saying so, exit 0', async () => {
    const r = await ws.warrant(['token', 'list'])
    assert.equal(r.code, 0, r.stderr)
    assert.equal(r.stdout, 'no tokens: none was created yet (warrant token create)\n')
  })

  test("a principal's name is shown escaped", async () => {
    // such a name is refused at creation now (principal-name-characters.test.ts); one stored before that check is
    // still listed, and must not draw a line
    const created = await ws.warrant(['token', 'create', '--role', 'agent', '--name', 'mallory'])
    assert.equal(created.code, 0, created.stderr)
    const db = new BetterSqlite3(join(ws.dir, 'warrant.db'))
    try {
      assert.equal(db.prepare('update principals set name = ? where name = ?').run(FORGED_NAME, 'mallory').changes, 1)
    } finally {
      db.close()
    }
    const r = await ws.warrant(['token', 'list'])
    assert.equal(r.code, 0, r.stderr)
    assert.equal(r.stdout.trimEnd().split('\n').length, 1, r.stdout)
    assert.doesNotMatch(r.stdout, /\x1b/)
    assert.match(r.stdout, /principal=mallory\\ntok_00000000(\\u0020){2}admin(\\u0020){5}principal=root\\u001b\[2J/)
  })
})
