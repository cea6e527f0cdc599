import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { createCliWorkspace } from '../support/cli-config.js'

/**
 * README, exit statuses: 5 is "the answer is incomplete", 0 only for a whole answer. `warrant operation results`
 * prints one page (100 by default) and said "more results" on stderr only, exiting 0: a script reading
 * `--outcome failed --json` took the first page of failures for all of them. It exits 5 while more remain, and
 * the continuation it prints keeps the page size it was given.
 */
describe('warrant operation results: a page that is not the end exits 5 (sqlite)', () => {
  let ws: Awaited<ReturnType<typeof createCliWorkspace>>
  let operationId = ''
  before(async () => {
    ws = await createCliWorkspace({ count: 300 })
    const reviewer = JSON.parse((await ws.warrant(['token', 'create', '--role', 'reviewer', '--name', 'alice', '--json'])).stdout).token as string
    const selection = JSON.parse((await ws.warrant(['select', 'subscriptions', '-f', 'status=past_due', '-f', 'collection=active', '--json', '-q'])).stdout)
    assert.ok(selection.count >= 3, `count ${selection.count}`)
    const plan = JSON.parse((await ws.warrant(['plan', selection.selection_id, '--action', 'pause_collection', '--param', 'reason=pages', '--json'])).stdout)
    if (plan.approval_state?.still_needed !== 0) assert.equal((await ws.warrant(['approve', plan.plan_id, '--digest', plan.plan_digest, '--token', reviewer])).code, 0)
    const committed = await ws.warrant(['commit', plan.plan_id, '--key', 'pages-1', '--digest', plan.plan_digest, '--wait', '--json', '-q'])
    assert.equal(committed.code, 0, committed.stderr)
    operationId = JSON.parse(committed.stdout).operation_id
  })
  after(async () => {
    await ws?.drop()
  })

  test('--limit 2 of more: exit 5, and the continuation keeps --limit 2', async () => {
    for (const json of [[], ['--json']]) {
      const r = await ws.warrant(['operation', 'results', operationId, '--limit', '2', ...json])
      assert.equal(r.stdout.trim().split('\n').length, 2)
      assert.equal(r.code, 5, `exit ${r.code} for one page of several ${json.join('')}\n${r.stderr}`)
      assert.match(r.stderr, /--limit 2 --cursor \S+/)
    }
  })

  test('--all, and a page that reaches the end: exit 0', async () => {
    const all = await ws.warrant(['operation', 'results', operationId, '--limit', '2', '--all'])
    assert.equal(all.code, 0, all.stderr)
    const whole = await ws.warrant(['operation', 'results', operationId])
    assert.equal(whole.code, 0, whole.stderr)
    assert.equal(whole.stdout.trim().split('\n').length, all.stdout.trim().split('\n').length)
  })
})
