import assert from 'node:assert/strict'
import { join } from 'node:path'
import { after, before, describe, test } from 'node:test'
import Database from 'better-sqlite3'
import { createCliWorkspace } from '../support/cli-config.js'
import { interruptCliWhen } from '../support/cli-interrupt.js'

/**
 * Ctrl-C during a long walk killed the CLI where it stood: no line said so, and the command left no audit row
 * (README: every `warrant` command leaves one), so a select that froze members, then stopped, was in the log
 * only as its upstream calls. It is recorded as `interrupted`, stderr says so, and the exit status is the
 * shell's for the signal (130), never 0 or 5.
 */
describe('Ctrl-C during warrant select (sqlite)', () => {
  let ws: Awaited<ReturnType<typeof createCliWorkspace>>
  before(async () => {
    ws = await createCliWorkspace({ count: 20_000 })
  })
  after(async () => {
    await ws?.drop()
  })

  test('exit 130, said on stderr, and a cli:select row marked interrupted', { timeout: 120_000 }, async () => {
    const { code, stdout, stderr } = await interruptCliWhen(ws.dir, ['select', 'subscriptions', '--page-size', '10', '--config', ws.configPath], /[1-9]\d* page\(s\) read/)
    assert.equal(code, 130, `exit ${code}\n${stdout}\n${stderr}`)
    assert.equal(stdout, '', 'no answer was printed')
    assert.match(stderr, /warrant: interrupted/)
    assert.doesNotMatch(stderr, /^\s+at .+[(:]\d+/m)
    const db = new Database(join(ws.dir, 'warrant.db'), { readonly: true })
    const rows = db.prepare("select summary from audit_events where action = 'cli:select'").all() as { summary: string }[]
    db.close()
    assert.equal(rows.length, 1, 'the interrupted command left its row')
    assert.equal(JSON.parse(rows[0]!.summary).outcome, 'interrupted')
  })
})
