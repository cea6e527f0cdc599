import assert from 'node:assert/strict'
import { join } from 'node:path'
import { after, before, describe, test } from 'node:test'
import Database from 'better-sqlite3'
import { createCliWorkspace } from '../support/cli-config.js'

/**
 * An operation's halt reason quotes the upstream's last error and names the target's id. `warrant operation show`
 * (and `commit --wait`, `watch`, `reconcile`, which print the same view) put both on the HALTED line as they came:
 * a newline in the upstream's message drew a line of its own ("all targets succeeded") under HALTED, and its
 * escape sequence reached the terminal. They are escaped, as table cells are.
 */
describe('warrant operation show: a halt reason quoting the upstream is escaped (sqlite)', () => {
  let ws: Awaited<ReturnType<typeof createCliWorkspace>>
  let operationId = ''
  let committed = { code: 0, stdout: '', stderr: '' }
  before(async () => {
    ws = await createCliWorkspace({
      count: 60,
      edit: (raw) => {
        raw.execution = { concurrency: 1, halt_after_validation_failures: 1 }
      },
    })
    const db = new Database(join(ws.dir, 'demo.db'))
    const rows = db.prepare("select id from subscriptions where status = 'past_due' and collection = 'active' order by id limit 3").all() as { id: string }[]
    for (const r of rows) db.prepare("update subscriptions set tenant = 'probe' where id = ?").run(r.id)
    db.exec(`create trigger refuse before update on subscriptions when old.id = '${rows[0]!.id}' begin select raise(abort, char(27)||'[2Jrefused'||char(10)||'  all targets succeeded'); end`)
    db.close()
    const reviewer = JSON.parse((await ws.warrant(['token', 'create', '--role', 'reviewer', '--name', 'alice', '--json'])).stdout).token as string
    const selection = JSON.parse((await ws.warrant(['select', 'subscriptions', '-f', 'tenant=probe', '--json', '-q'])).stdout)
    const plan = JSON.parse((await ws.warrant(['plan', selection.selection_id, '--action', 'pause_collection', '--param', 'reason=x', '--json'])).stdout)
    assert.equal((await ws.warrant(['approve', plan.plan_id, '--digest', plan.plan_digest, '--token', reviewer])).code, 0)
    committed = await ws.warrant(['commit', plan.plan_id, '--key', 'halt-1', '--digest', plan.plan_digest, '--wait', '-q'])
    operationId = /operation (op_[^\s,]+)/.exec(committed.stdout)![1]!
  })
  after(async () => {
    await ws?.drop()
  })

  test('show and commit --wait: one HALTED line, the upstream text escaped', async () => {
    const shown = await ws.warrant(['operation', 'show', operationId])
    for (const r of [committed, shown]) {
      assert.equal(r.code, 3, `${r.stdout}\n${r.stderr}`)
      assert.match(r.stdout, /HALTED by stop rule validation_failures/)
      assert.doesNotMatch(r.stdout, /^\s+all targets succeeded/m, 'no line drawn from the upstream text')
      assert.doesNotMatch(r.stdout, /\x1b/, 'no escape sequence reaches the terminal')
      assert.match(r.stdout, /\\u001b\[2Jrefused\\n\\u0020\\u0020all targets succeeded/)
    }
  })
})
