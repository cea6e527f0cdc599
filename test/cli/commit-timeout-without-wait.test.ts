import assert from 'node:assert/strict'
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { after, before, describe, test } from 'node:test'
import Database from 'better-sqlite3'
import { createCliWorkspace } from '../support/cli-config.js'

/**
 * `--timeout-ms` bounds how long `commit --wait` waits. Without `--wait` nothing waits: the option was accepted and
 * ignored, exit 0, so a script that meant "commit, and give up after a minute" believed it had a bound it did not
 * have, and (had it left out --wait by mistake) that the operation ran here. It is refused as a bad option, exit 2
 * naming both flags, before anything is committed; with --wait it is taken as before.
 */
describe('warrant commit --timeout-ms without --wait (real process, sqlite)', () => {
  let ws: Awaited<ReturnType<typeof createCliWorkspace>>
  before(async () => {
    ws = await createCliWorkspace({ count: 20 })
  })
  after(async () => {
    await ws?.drop()
  })

  test('exit 2 naming --timeout-ms and --wait; no operation is recorded', { timeout: 120_000 }, async () => {
    const reviewer = JSON.parse((await ws.warrant(['token', 'create', '--role', 'reviewer', '--name', 'alice', '--json'])).stdout).token as string
    const selection = JSON.parse((await ws.warrant(['select', 'subscriptions', '-f', 'status=past_due', '--json', '-q'])).stdout)
    const plan = JSON.parse((await ws.warrant(['plan', selection.selection_id, '--action', 'pause_collection', '--param', 'reason=timeout', '--json'])).stdout)
    const approved = await ws.warrant(['approve', plan.plan_id, '--digest', plan.plan_digest, '--token', reviewer])
    assert.equal(approved.code, 0, approved.stderr)

    const r = await ws.warrant(['commit', plan.plan_id, '--key', 'k-timeout', '--digest', plan.plan_digest, '--timeout-ms', '60000'])
    assert.equal(r.code, 2, `exit ${r.code}\n${r.stdout}\n${r.stderr}`)
    assert.match(r.stderr, /--timeout-ms/)
    assert.match(r.stderr, /--wait/)
    assert.equal(operations(ws.dir), 0, 'nothing was committed')

    const waited = await ws.warrant(['commit', plan.plan_id, '--key', 'k-timeout', '--digest', plan.plan_digest, '--wait', '--timeout-ms', '60000', '-q'])
    // ran here to its end (one demo record is skipped by its precondition: exit 3, finished otherwise than all succeeded)
    assert.ok(waited.code === 0 || waited.code === 3, `exit ${waited.code}\n${waited.stdout}\n${waited.stderr}`)
    assert.match(waited.stdout, /state: (succeeded|completed_with_skips)/)
    assert.equal(operations(ws.dir), 1)
  })
})

/** How many operations the workspace's store holds. */
function operations(dir: string): number {
  if (!existsSync(join(dir, 'warrant.db'))) return 0
  const store = new Database(join(dir, 'warrant.db'), { readonly: true })
  try {
    return (store.prepare('select count(*) as n from operations').get() as { n: number }).n
  } finally {
    store.close()
  }
}
