import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { after, before, describe, test } from 'node:test'
import BetterSqlite3 from 'better-sqlite3'
import { type Actor, digestOf } from '../../src/contract/index.js'
import type { GatewayFixture } from '../support/gateway-fixture.js'
import { sqliteResourceGateway } from '../support/sqlite-resource-gateway.js'

/**
 * A frozen member is a record id and the version it had, read by the resource's `id_field` and `version_field`. A
 * restart on a config that names records by another column (`id_field: account_no`, a unique column whose values
 * are other rows' ids), table and URL unchanged, left the selection usable: its plan was proposed, approved and
 * committed, and the executor wrote the row whose account_no was the frozen id, a row nobody reviewed, at its
 * version 1 like every fresh row. Now a change of how records are named (or versioned) is drift like a move.
 */
describe('a selection whose resource names its records by another column since it was frozen', () => {
  let accounts: Awaited<ReturnType<typeof sqliteResourceGateway>>
  let fx: GatewayFixture
  let file: string
  const tokens = { agent: '', reviewer: '' }
  before(async () => {
    accounts = await sqliteResourceGateway(
      'accounts',
      (db) => {
        db.exec('create table accounts (id text primary key, account_no text not null unique, status text not null, version integer not null)')
        // each row's account_no is another row's id
        db.exec("insert into accounts values ('r1', 'r2', 'open', 1), ('r2', 'r3', 'open', 1), ('r3', 'r1', 'open', 1)")
      },
      (url) => ({
        environment: { name: 'accounts-prod' },
        connector: { kind: 'sql', url, table: 'accounts' },
        fields: { id: 'string', account_no: 'string', status: 'string', version: 'integer' },
        id_field: 'id',
        version_field: 'version',
        review_fields: ['id', 'account_no', 'status'],
        actions: { close: { description: 'close an account', set: { status: 'closed' }, precondition: { status: 'open' } } },
      }),
    )
    fx = accounts.fx
    file = accounts.file
    const scopes = { resources: ['accounts'], actions: '*' as const }
    tokens.agent = (await fx.gateway.principals.issue({ name: 'accounts-agent', role: 'agent', scopes })).token
    tokens.reviewer = (await fx.gateway.principals.issue({ name: 'accounts-reviewer', role: 'reviewer', scopes })).token
  })
  after(async () => {
    await accounts?.close()
  })

  const renamedRefusal = (field: string) => (e: any) => {
    assert.equal(e.code, 'conflict', e.message)
    assert.equal(e.details?.reason, 'upstream_moved')
    assert.match(e.message, new RegExp(field))
    return true
  }

  for (const [what, edit, field] of [
    ['id_field', (r: Record<string, any>) => void (r.id_field = 'account_no'), 'id_field'],
    ['version_field', (r: Record<string, any>) => void (r.version_field = 'account_no'), 'version_field'],
  ] as const)
    test(`${what} changed: the selection is refused for a proposal and its view says so; the plan proposed before is not run`, async () => {
      const agent: Actor = await fx.gateway.principals.authenticate(tokens.agent, 'http')
      const selection = await fx.gateway.selections.create(agent, 'accounts', { filter: { id: 'r1' } })
      assert.equal(selection.count, 1)
      const plan = await fx.gateway.plans.propose(agent, selection.selection_id, { action: { type: 'close' } })
      const later = await fx.gateway.selections.create(agent, 'accounts', { filter: { id: 'r1' }, fields: ['id', 'status'] })
      const moved = await accounts.reopened(edit)
      try {
        const movedAgent = await moved.principals.authenticate(tokens.agent, 'http')
        const reviewer = await moved.principals.authenticate(tokens.reviewer, 'http')
        await assert.rejects(moved.plans.propose(movedAgent, later.selection_id, { action: { type: 'close' } }), renamedRefusal(field))
        const view = await moved.selections.view(movedAgent, later.selection_id)
        assert.match(view.upstream_moved ?? '', new RegExp(field))
        assert.equal(view.committable, false)
        const planView = await moved.plans.view(movedAgent, plan.plan_id)
        assert.ok(planView.config_drift.some((d: any) => d.code === 'upstream_moved'), JSON.stringify(planView.config_drift))
        await assert.rejects(moved.plans.decide(reviewer, plan.plan_id, { decision: 'approve', expected_plan_digest: plan.plan_digest }), (e: any) => e.code === 'conflict')
        await assert.rejects(moved.operations.commitPlan(movedAgent, plan.plan_id, { idempotencyKey: randomUUID(), expectedDigest: plan.plan_digest }), (e: any) => e.code === 'conflict' || e.code === 'not_approved')
        await moved.audit.flush()
      } finally {
        await moved.close()
      }
      const rows = new BetterSqlite3(file, { readonly: true }).prepare('select id, status from accounts order by id').all()
      assert.deepEqual(rows, [
        { id: 'r1', status: 'open' },
        { id: 'r2', status: 'open' },
        { id: 'r3', status: 'open' },
      ], 'nothing was written')
      // under the config it was frozen with, it is proposed on
      const again = await fx.gateway.plans.propose(agent, later.selection_id, { action: { type: 'close' } })
      assert.equal(again.created, true)
    })

  test('a digest kept before naming was part of it (a bare sha256 of the place) is still judged by the place alone', async () => {
    const agent: Actor = await fx.gateway.principals.authenticate(tokens.agent, 'http')
    const older = await fx.gateway.selections.create(agent, 'accounts', { filter: { id: 'r2' } })
    await fx.gateway.store.db
      .updateTable('selections')
      .set({ upstream_digest: digestOf({ kind: 'sql', url: `sqlite:${file}`, table: 'accounts' }) })
      .where('id', '=', older.selection_id)
      .execute()
    assert.equal((await fx.gateway.selections.view(agent, older.selection_id)).upstream_moved, null, 'the same place: not moved')
    const elsewhere = await accounts.reopened((r) => void (r.connector.table = 'accounts_copy'))
    try {
      const view = await elsewhere.selections.view(await elsewhere.principals.authenticate(tokens.agent, 'http'), older.selection_id)
      assert.match(view.upstream_moved ?? '', /points elsewhere/)
      await elsewhere.audit.flush()
    } finally {
      await elsewhere.close()
    }
  })
})
