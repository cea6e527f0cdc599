import assert from 'node:assert/strict'
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { after, before, describe, test } from 'node:test'
import { createCliWorkspace, runWarrant } from '../support/cli-config.js'

/**
 * An operator tries a changed config against the live store before deploying it: `warrant check --config trial.json`
 * (or a search, an audit query) with an action redefined. Every gateway open judged the open plans under the config
 * it ran and recorded the drift, so that trial voided every approval given on the live config, for good (a config
 * put back no longer revives one), though the trial process never served, viewed or committed a plan. A command that
 * only reads (check included, whose probes never touch a plan) now judges nothing at open; a command that acts (plan,
 * commit, serve) still records the drift as before.
 */
describe('a trial config in a reading command leaves the live plans approved (real subprocesses)', () => {
  let ws: Awaited<ReturnType<typeof createCliWorkspace>>
  let reviewer = ''
  let trial = ''
  before(async () => {
    ws = await createCliWorkspace({ count: 200 })
    reviewer = JSON.parse((await ws.warrant(['token', 'create', '--role', 'reviewer', '--name', 'rita', '--json'])).stdout).token as string
    const raw = JSON.parse(readFileSync(ws.configPath, 'utf8'))
    delete raw.resources.subscriptions.actions.pause_collection.precondition
    trial = join(ws.dir, 'trial.json')
    writeFileSync(trial, JSON.stringify(raw, null, 2))
  })
  after(async () => {
    await ws?.drop()
  })

  const approvedPlan = async () => {
    const selection = JSON.parse((await ws.warrant(['select', 'subscriptions', '-f', 'status=past_due', '-f', 'region=eu', '-f', 'collection=active', '--json', '-q'])).stdout)
    const plan = JSON.parse((await ws.warrant(['plan', selection.selection_id, '--action', 'pause_collection', '--param', 'reason=x', '--json'])).stdout)
    const approved = await ws.warrant(['approve', plan.plan_id, '--digest', plan.plan_digest, '--token', reviewer])
    assert.equal(approved.code, 0, approved.stderr)
    return plan as { plan_id: string; plan_digest: string }
  }
  const drift = (planId: string) =>
    ws.withStore(async (store) => (await store.db.selectFrom('plans').select(['config_drift']).where('id', '=', planId).executeTakeFirstOrThrow()) as { config_drift: string | null })

  test('check, search and audit verify on the trial config record no drift; the plan commits on the live config', async () => {
    const plan = await approvedPlan()
    for (const args of [['check', 'subscriptions'], ['search', 'subscriptions', '-f', 'status=past_due'], ['audit', 'verify']]) {
      const run = await runWarrant([...args, '--config', trial], ws.dir)
      assert.ok(run.code === 0 || run.code === 1, `${args.join(' ')}: ${run.code} ${run.stderr}`)
      assert.doesNotMatch(run.stderr, /the config moved under these open plans/)
    }
    assert.equal((await drift(plan.plan_id)).config_drift, null)
    const committed = await ws.warrant(['commit', plan.plan_id, '--digest', plan.plan_digest, '--key', 'trial-1', '--wait', '-q'])
    assert.equal(committed.code, 0, committed.stderr + committed.stdout)
  })

  test('a command that acts on the trial config still records the drift: the approval given before no longer counts', async () => {
    const plan = await approvedPlan()
    const other = JSON.parse((await runWarrant(['select', 'subscriptions', '-f', 'status=active', '--json', '-q', '--config', trial], ws.dir)).stdout)
    assert.ok(other.selection_id)
    assert.deepEqual(JSON.parse((await drift(plan.plan_id)).config_drift ?? 'null'), ['action_redefined'])
    const committed = await ws.warrant(['commit', plan.plan_id, '--digest', plan.plan_digest, '--key', 'trial-2', '-q'])
    assert.notEqual(committed.code, 0)
    assert.match(committed.stderr, /not_approved/)
  })
})
