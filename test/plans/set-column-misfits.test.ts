import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import type { GatewayFixture } from '../support/gateway-fixture.js'
import { allResults, selectProposeApprove, waitForOperation, type Caller } from '../operations/support/flow.js'
import { STORE_KINDS } from '../support/stores.js'
import { startWithResources, type UpstreamExec } from './support/upstream-exec.js'

/**
 * A plan whose action sets a value of its field's declared type into a column of another type (a boolean into a
 * PostgreSQL integer column; into a SQLite TEXT column, kept there as the text '1') was proposed (201), previewed,
 * approved and committed; only the database then refused every target (PostgreSQL: "invalid input syntax for type
 * integer", a 422) or kept the value as text. The connector's misfit judgement, which refuses a filter on such a
 * field, now refuses the proposal: a 400 naming the field, the value's type and the column's type, no plan stored,
 * whether the value is the action's own (`set: {flag: true}`) or rendered from a parameter. A column retyped after the
 * approval is refused again by the write itself, before the UPDATE is sent. Each engine both as the store and the upstream.
 */
const MISFIT_COLUMN = { sqlite: 'text', postgres: 'integer' } as const
const FITTING_COLUMN = { sqlite: 'integer', postgres: 'boolean' } as const
const SHOWN_MISFIT = { sqlite: 'TEXT', postgres: 'integer' } as const

const ACTIONS = {
  flag_on: { description: 'raise the flag', set: { flag: true }, reversible: true },
  set_flag: { description: 'the flag from a parameter', params: { on: { type: 'boolean', required: false } }, set: { flag: '{{params.on}}' } },
  rename: { description: 'rename', params: { name: { type: 'string' } }, set: { name: '{{params.name}}' } },
}

for (const kind of STORE_KINDS) {
  describe(`an action setting a value its column does not hold is refused at proposal (${kind} store and upstream)`, () => {
    let env: Awaited<ReturnType<typeof startWithResources>> | undefined
    const table = (name: string, flag: string) => `create table ${name} (id varchar(10) primary key, version integer not null, flag ${flag}, name varchar(10))`
    const resource = (name: string) => (config: Record<string, any>) => ({
      environment: config.resources.subscriptions.environment,
      connector: { kind: 'sql', url: config.resources.subscriptions.connector.url, table: name },
      fields: { id: 'string', version: 'integer', flag: 'boolean', name: 'string' },
      id_field: 'id',
      version_field: 'version',
      review_fields: ['id', 'flag', 'name'],
      actions: structuredClone(ACTIONS),
    })
    let fx: GatewayFixture
    let agent: Caller
    let upstream: UpstreamExec
    before(async () => {
      // the demo's upstream database, holding two tables more: one whose flag column misfits, one whose fits
      env = await startWithResources(kind, 'flags-agent', { flags: resource('flags'), toggles: resource('toggles') })
      ;({ fx, agent, upstream } = env)
      await upstream.exec(table('flags', MISFIT_COLUMN[kind]))
      await upstream.exec(table('toggles', FITTING_COLUMN[kind]))
      for (const t of ['flags', 'toggles']) await upstream.exec(`insert into ${t} (id, version, flag, name) values ('a', 1, null, 'n'), ('b', 1, null, 'n'), ('c', 1, null, 'n')`)
    })
    after(async () => {
      await env?.close()
    })

    const plansOn = async (selectionId: string) => (await fx.gateway.store.db.selectFrom('plans').select('id').where('selection_id', '=', selectionId).execute()).length

    test("the action's own value, and one from a parameter: 400 naming the field, the value's type and the column's, nothing stored", async () => {
      const sel = await agent('POST', '/v1/resources/flags/selections', { filter: { name: 'n' } })
      assert.equal(sel.status, 201, JSON.stringify(sel.body))
      assert.equal(sel.body.complete, true)
      for (const action of [{ type: 'flag_on' }, { type: 'set_flag', params: { on: true } }]) {
        const plan = await agent('POST', `/v1/selections/${sel.body.selection_id}/plans`, { action })
        assert.equal(plan.status, 400, JSON.stringify(plan.body))
        assert.equal(plan.body.error.code, 'invalid_request')
        assert.match(plan.body.error.message, new RegExp(`action "${action.type}" sets "flag" to a boolean where field "flag" is declared boolean, but column "flag" of table flags is ${SHOWN_MISFIT[kind]}: .*Nothing was proposed`))
        assert.deepEqual(plan.body.error.details, { action: action.type, field: 'flag', value_type: 'a boolean', column_type: SHOWN_MISFIT[kind] })
      }
      assert.equal(await plansOn(sel.body.selection_id), 0, 'no plan row is stored')
      // null (the optional parameter absent) is every column's "none", and a fitting field is proposed as before
      for (const action of [{ type: 'set_flag' }, { type: 'rename', params: { name: 'm' } }]) {
        const plan = await agent('POST', `/v1/selections/${sel.body.selection_id}/plans`, { action })
        assert.equal(plan.status, 201, `${JSON.stringify(action)}: ${JSON.stringify(plan.body)}`)
      }
    })

    test('a fitting column is proposed, approved and written as before', async () => {
      const { plan } = await selectProposeApprove(agent, [fx.as('reviewer')], 'toggles', { filter: { id: 'a' } }, { type: 'flag_on' })
      const commit = await agent('POST', `/v1/plans/${plan.plan_id}/commit`, { expected_digest: plan.plan_digest }, { 'idempotency-key': `fits-${kind}` })
      assert.equal(commit.status, 202, JSON.stringify(commit.body))
      const op = await waitForOperation(agent, commit.body.operation_id)
      assert.equal(op.state, 'succeeded', JSON.stringify(op))
    })

    test('a column retyped after the approval: the target fails naming it, and no UPDATE is sent', async () => {
      const { plan } = await selectProposeApprove(agent, [fx.as('reviewer')], 'toggles', { filter: { id: 'b' } }, { type: 'flag_on' })
      await upstream.exec('alter table toggles rename to toggles_old')
      await upstream.exec(table('toggles', MISFIT_COLUMN[kind]))
      await upstream.exec('insert into toggles (id, version, flag, name) select id, version, null, name from toggles_old')
      const commit = await agent('POST', `/v1/plans/${plan.plan_id}/commit`, { expected_digest: plan.plan_digest }, { 'idempotency-key': `retyped-${kind}` })
      assert.equal(commit.status, 202, JSON.stringify(commit.body))
      const op = await waitForOperation(agent, commit.body.operation_id)
      const [result] = await allResults(agent, op.operation_id)
      assert.equal(result.outcome, 'failed', JSON.stringify(result))
      assert.equal(result.reason, 'write_refused', JSON.stringify(result))
      assert.match(result.error, new RegExp(`sets "flag" to a boolean where field "flag" is declared boolean, but column "flag" of table toggles is ${SHOWN_MISFIT[kind]}: .*nothing was sent`))
      const calls = await fx.gateway.store.db.selectFrom('audit_events').selectAll().where('level', '=', 'call').where('target_id', '=', 'b').execute()
      assert.ok(calls.length > 0, 'the re-read of b is logged')
      assert.deepEqual(calls.filter((c) => /UPDATE/.test(`${c.summary} ${c.details}`)), [], 'no UPDATE of b was sent')
    })
  })
}
