import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { createCliWorkspace, type CliWorkspace } from '../support/cli-config.js'

/**
 * Two operators (or scripts) creating principals at once on one SQLite store, each `warrant token create` its own
 * process. The create read the names (the case and look-alike checks) in a deferred transaction and then wrote:
 * when the other process had written meanwhile, SQLite refused the write at once (SQLITE_BUSY_SNAPSHOT), and the
 * command exited 4 saying the lock had been "held past store.busy_timeout_ms", which it had not waited for. The
 * create now takes the write lock up front, so the other process's create waits its turn and both succeed.
 */
describe('warrant token create from two processes at once on one SQLite store', () => {
  let ws: CliWorkspace
  before(async () => {
    ws = await createCliWorkspace({ count: 10 })
    // the store exists, migrated, before the race begins
    const first = await ws.warrant(['token', 'create', '--role', 'agent', '--name', 'seed'])
    assert.equal(first.code, 0, first.stderr)
  })
  after(() => ws?.drop())

  test('every create of two concurrent lanes succeeds, and every principal is stored', async () => {
    const lane = async (prefix: string) => {
      const failures: string[] = []
      for (let i = 0; i < 6; i++) {
        const r = await ws.warrant(['token', 'create', '--role', 'agent', '--name', `${prefix}-${i}`])
        if (r.code !== 0) failures.push(`${prefix}-${i}: exit ${r.code}: ${r.stderr.trim()}`)
      }
      return failures
    }
    const failures = (await Promise.all([lane('left'), lane('right'), lane('third')])).flat()
    assert.deepEqual(failures, [])
    const names = await ws.withStore((store) => store.db.selectFrom('principals').select('name').execute())
    assert.equal(names.length, 1 + 18)
  })
})
