import assert from 'node:assert/strict'
import { join } from 'node:path'
import { after, before, describe, test } from 'node:test'
import Database from 'better-sqlite3'
import { createCliWorkspace } from '../support/cli-config.js'

/** A record id and an upstream error that each try to draw a result row of their own, and to clear the screen. */
const FORGED_ID = 'sub_\x1b[31mred\n      9  sub_forged  succeeded'
const FORGED_ERROR = "char(27)||'[2Jboom'||char(10)||'      9  sub_forged2  succeeded'"

/**
 * `warrant operation results`: (1) with nothing to list (`--outcome unknown` of an operation without unknowns) it
 * printed nothing at all and exited 0, so a person or script could not tell "none" from a command that printed
 * nothing because it broke; the human output now says so in a line, the `--json` lines stay data (none).
 * (2) The record id and the upstream's error text went to the terminal as they came: a newline drew a result row
 * no target has (`9  sub_forged  succeeded`) and an ANSI escape reached the terminal. They are escaped as table
 * cells are (src/cli/table-cell.ts).
 */
describe('warrant operation results: an empty list says so; upstream text is escaped (sqlite)', () => {
  let ws: Awaited<ReturnType<typeof createCliWorkspace>>
  let operationId = ''
  before(async () => {
    ws = await createCliWorkspace({ count: 60 })
    const db = new Database(join(ws.dir, 'demo.db'))
    const rows = db.prepare("select id from subscriptions where status = 'past_due' and collection = 'active' order by id limit 3").all() as { id: string }[]
    assert.equal(rows.length, 3)
    for (const r of rows) db.prepare("update subscriptions set tenant = 'probe' where id = ?").run(r.id)
    db.prepare('update subscriptions set id = ? where id = ?').run(FORGED_ID, rows[0]!.id)
    // the upstream refuses one write with a message of its own making
    db.exec(`create trigger refuse before update on subscriptions when old.id = '${rows[1]!.id}' begin select raise(abort, ${FORGED_ERROR}); end`)
    db.close()
    const reviewer = JSON.parse((await ws.warrant(['token', 'create', '--role', 'reviewer', '--name', 'alice', '--json'])).stdout).token as string
    const selection = JSON.parse((await ws.warrant(['select', 'subscriptions', '-f', 'tenant=probe', '--json', '-q'])).stdout)
    assert.equal(selection.count, 3)
    const plan = JSON.parse((await ws.warrant(['plan', selection.selection_id, '--action', 'pause_collection', '--param', 'reason=x', '--json'])).stdout)
    assert.equal((await ws.warrant(['approve', plan.plan_id, '--digest', plan.plan_digest, '--token', reviewer])).code, 0)
    const committed = await ws.warrant(['commit', plan.plan_id, '--key', 'text-1', '--digest', plan.plan_digest, '--wait', '--json', '-q'])
    const view = JSON.parse(committed.stdout)
    assert.equal(view.counts.failed, 1, committed.stdout)
    operationId = view.operation_id
  })
  after(async () => {
    await ws?.drop()
  })

  test('no result with the outcome asked for: a line saying so (exit 0); --json prints no line', async () => {
    const human = await ws.warrant(['operation', 'results', operationId, '--outcome', 'unknown'])
    assert.equal(human.code, 0, human.stderr)
    assert.match(human.stdout, new RegExp(`^no results with outcome unknown: operation ${operationId}\\b`))
    const json = await ws.warrant(['operation', 'results', operationId, '--outcome', 'unknown', '--json'])
    assert.equal(json.code, 0, json.stderr)
    assert.equal(json.stdout, '', 'JSON lines stay data: none')
  })

  test('a record id and an upstream error never draw a row of their own nor reach the terminal as escapes', async () => {
    const r = await ws.warrant(['operation', 'results', operationId])
    assert.equal(r.code, 0, r.stderr)
    const lines = r.stdout.trimEnd().split('\n')
    assert.equal(lines.length, 3, r.stdout)
    assert.doesNotMatch(r.stdout, /^\s+9\s+sub_forged/m, 'no row drawn from a value')
    assert.doesNotMatch(r.stdout, /\x1b/, 'no escape sequence reaches the terminal')
    assert.match(r.stdout, /sub_\\u001b\[31mred\\n(?:\\u0020){6}9(?:\\u0020){2}sub_forged(?:\\u0020){2}succeeded/, 'the id is shown escaped')
    assert.match(r.stdout, /\\u001b\[2Jboom\\n(?:\\u0020){6}9(?:\\u0020){2}sub_forged2/, 'the error is shown escaped')
    // JSON keeps the data as the upstream gave it
    const json = await ws.warrant(['operation', 'results', operationId, '--json'])
    assert.ok(json.stdout.trimEnd().split('\n').some((l) => JSON.parse(l).id === FORGED_ID))
  })

  // the same id, as `warrant audit query --operation` lists the events and the records changed
  test('audit query --operation: a record id never draws a line of its own nor reaches the terminal as an escape', async () => {
    const r = await ws.warrant(['audit', 'query', '--operation', operationId])
    assert.equal(r.code, 0, r.stderr)
    assert.doesNotMatch(r.stdout, /^\s+9\s+sub_forged/m, 'no line drawn from a value')
    assert.doesNotMatch(r.stdout, /\x1b/, 'no escape sequence reaches the terminal')
    assert.match(r.stdout, /target=sub_\\u001b\[31mred\\n/, 'the event names the id escaped')
    assert.match(r.stdout, /^ {2}sub_\\u001b\[31mred\\n(?:\\u0020){6}9(?:\\u0020){2}sub_forged(?:\\u0020){2}succeeded {2}UPDATE/m, 'records changed names it escaped')
  })
})
