import assert from 'node:assert/strict'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { after, before, describe, test } from 'node:test'
import Database from 'better-sqlite3'
import { createCliWorkspace } from '../support/cli-config.js'

/**
 * A token given on the command line that holds nothing (an empty --token-file, say from a `token create > FILE`
 * that failed, or `--token "$UNSET"`) made the command run as the local operator, whose scopes are every
 * resource and action: a selection frozen, a plan proposed, under another principal than the one asked for.
 * It is refused, naming the flag, and nothing is created.
 */
describe('an empty token given by flag is refused, never the local operator (sqlite)', () => {
  let ws: Awaited<ReturnType<typeof createCliWorkspace>>
  before(async () => {
    ws = await createCliWorkspace({ count: 200 })
    writeFileSync(join(ws.dir, 'empty.token'), '')
    writeFileSync(join(ws.dir, 'blank.token'), '\n\n')
    assert.equal((await ws.warrant(['token', 'list'])).code, 0) // creates the store
  })
  after(async () => {
    await ws?.drop()
  })

  const selections = () => {
    const db = new Database(join(ws.dir, 'warrant.db'), { readonly: true })
    try {
      return (db.prepare('select count(*) as n from selections').get() as { n: number }).n
    } finally {
      db.close()
    }
  }

  for (const [label, args, names] of [
    ['an empty --token-file', ['--token-file', 'empty.token'], /--token-file "empty\.token" is empty/],
    ['a --token-file of blank lines', ['--token-file', 'blank.token'], /--token-file "blank\.token" is empty/],
    ['--token ""', ['--token', ''], /--token is empty/],
    ['--as-token " "', ['--as-token', ' '], /--as-token is empty/],
  ] as const) {
    test(`${label}: exit 3 naming it, no selection created`, async () => {
      const before = selections()
      const r = await ws.warrant(['select', 'subscriptions', '-f', 'status=past_due', '-q', ...args])
      assert.equal(r.code, 3, r.stdout + r.stderr)
      assert.match(r.stderr, names)
      assert.equal(selections(), before, 'nothing was frozen')
    })
  }

  test('warrant approve with an empty --token-file names the empty file', async () => {
    const r = await ws.warrant(['approve', 'plan_x', '--digest', 'sha256:x', '--token-file', 'empty.token'])
    assert.equal(r.code, 3, r.stderr)
    assert.match(r.stderr, /--token-file "empty\.token" is empty/)
  })
})
