import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { createCliWorkspace, type CliWorkspace } from '../support/cli-config.js'

/**
 * `warrant store prune` without --json ends with what the sweep did, in words: the selections it pruned, those an
 * interrupted sweep had begun and this one finished (they were in --json only), and what it kept and why (a plan stands
 * on it: evidence; expired too recently for the age). An operator reading the text sees the whole sweep.
 */
const LONG_AGO = '2001-01-01T00:00:00.000Z'

describe('warrant store prune, text mode, ends with a summary of the whole sweep', () => {
  let ws: CliWorkspace
  before(async () => {
    ws = await createCliWorkspace({ count: 60 })
  })
  after(async () => {
    await ws?.drop()
  })

  test('pruned, finished and kept are all said, with counts and reasons', { timeout: 120_000 }, async () => {
    const select = async (filter: string) => {
      const run = await ws.warrant(['select', 'subscriptions', '-f', filter, '--json', '-q'])
      assert.equal(run.code, 0, run.stderr)
      return JSON.parse(run.stdout) as { selection_id: string; count: number }
    }
    const plain = await select('status=canceled')
    const interrupted = await select('status=active')
    const evidence = await select('status=past_due')
    const recent = await select('status=trialing')
    const plan = await ws.warrant(['plan', evidence.selection_id, '--action', 'pause_collection', '--param', 'reason=kept', '--json'])
    assert.equal(plan.code, 0, plan.stderr)
    await ws.withStore(async ({ db }) => {
      await db.updateTable('selections').set({ expires_at: LONG_AGO }).where('id', 'in', [plain.selection_id, interrupted.selection_id, evidence.selection_id]).execute()
      await db.updateTable('selections').set({ expires_at: new Date(Date.now() - 60_000).toISOString() }).where('id', '=', recent.selection_id).execute()
      // a sweep cut after it journaled and marked `interrupted`, its rows still there
      await db.updateTable('selections').set({ members_pruned_at: LONG_AGO }).where('id', '=', interrupted.selection_id).execute()
      await db.insertInto('kv').values({ key: `retention_pruning:${interrupted.selection_id}`, value: LONG_AGO }).execute()
    })

    const run = await ws.warrant(['store', 'prune', '--older-than', '30d'])
    assert.equal(run.code, 0, run.stderr)
    const out = run.stdout
    assert.match(out, new RegExp(`${plain.selection_id}.*${plain.count} member`), out)
    assert.match(out, /finished .*1 selection\(s\) an interrupted sweep/, out)
    assert.match(out, new RegExp(`${interrupted.selection_id}.*${interrupted.count} member`), out)
    assert.match(out, /kept: 1 expired selection\(s\) a plan stands on/, out)
    const summary = out.trimEnd().split('\n').at(-1)!
    assert.match(summary, new RegExp(`^done: 2 selection\\(s\\) pruned \\(1 new, 1 finished\\), ${plain.count + interrupted.count} member row\\(s\\)`), out)
    assert.match(summary, /1 kept as evidence/, out)
  })
})
