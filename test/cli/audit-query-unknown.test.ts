import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { type CliWorkspace, createCliWorkspace } from '../support/cli-config.js'

/**
 * `warrant audit query --operation op_typo` (a mistyped id, or an operation of another store's config) printed
 * "records changed (0)" and exited 0: the answer to "which records did this operation change?" read as "none" for an
 * operation the log has never seen. Asked of an operation no operation row and no accepted event names, it is
 * `not_found` (exit 2) naming the id and the store's config, human output and `--json` alike, even after a refused
 * command named the id.
 */
describe('warrant audit query --operation: an operation the log does not know is not found (real process, sqlite)', () => {
  let ws: CliWorkspace
  before(async () => {
    ws = await createCliWorkspace({ count: 5 })
  })
  after(async () => {
    await ws?.drop()
  })

  for (const json of [false, true])
    test(`--operation op_typo${json ? ' --json' : ''}`, { timeout: 60_000 }, async () => {
      // a refused command that named the id leaves a row with it: still no operation of this store
      const refused = await ws.warrant(['operation', 'show', 'op_typo'])
      assert.notEqual(refused.code, 0)
      const r = await ws.warrant(['audit', 'query', '--operation', 'op_typo', ...(json ? ['--json'] : [])])
      assert.equal(r.code, 2, `${r.stdout}\n${r.stderr}`)
      assert.equal(r.stdout, '')
      assert.match(r.stderr, /not_found: .*op_typo/, r.stderr)
      assert.doesNotMatch(r.stdout + r.stderr, /records changed \(0\)/)
    })
})
