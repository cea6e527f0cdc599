import assert from 'node:assert/strict'
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { after, before, describe, test } from 'node:test'
import Database from 'better-sqlite3'
import { type CliWorkspace, createCliWorkspace } from '../support/cli-config.js'

/**
 * `--fields ''` (a variable that came out empty in a script) names no field. `search` refused it; `select` read the
 * empty text as no option at all and froze a selection showing the default review fields, exit 0, so a script that
 * meant to choose its fields never learned it had chosen none. Both refuse it, exit 2, and `select` freezes nothing.
 */
describe('warrant search / select --fields naming no field (real process, sqlite)', () => {
  let ws: CliWorkspace
  before(async () => {
    ws = await createCliWorkspace({ count: 20 })
  })
  after(async () => {
    await ws?.drop()
  })

  for (const command of ['search', 'select']) {
    for (const fields of ['', ' , ']) {
      test(`warrant ${command} --fields ${JSON.stringify(fields)}: exit 2 naming --fields, nothing frozen`, { timeout: 60_000 }, async () => {
        const before = frozen(ws)
        const r = await ws.warrant([command, 'subscriptions', '-f', 'status=past_due', '--fields', fields, ...(command === 'select' ? ['-q'] : [])])
        assert.equal(r.code, 2, `exit ${r.code}\n${r.stdout}\n${r.stderr}`)
        assert.match(r.stderr, /fields/)
        assert.equal(frozen(ws), before, 'no selection was frozen')
      })
    }
  }
})

/** How many selections the workspace's store holds. */
function frozen(ws: CliWorkspace): number {
  if (!existsSync(join(ws.dir, 'warrant.db'))) return 0
  const store = new Database(join(ws.dir, 'warrant.db'), { readonly: true })
  try {
    return (store.prepare('select count(*) as n from selections').get() as { n: number }).n
  } finally {
    store.close()
  }
}
