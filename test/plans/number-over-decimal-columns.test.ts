import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { type GatewayFixture, startDemoGateway } from '../support/gateway-fixture.js'
import { caller, selectProposeApprove, waitForOperation, type Caller } from '../operations/support/flow.js'
import { openAnyUpstream, type AnyUpstream } from '../operations/support/upstream-connection.js'

/**
 * A `number` field over a numeric(12,2) column: `set: {amount: 12.345}` was proposed, approved and committed; the
 * database rounded it to 12.35 (PostgreSQL, MariaDB), so each target of the first window was written with another
 * value than approved before the effect check halted the run (`effect_contradicted`: the records had changed). A
 * value past the column's digits (1e13 into numeric(12,2)) failed every target at the database, and 12.5 into an
 * integer column was refused (PostgreSQL) or rounded (MariaDB). A number the column cannot keep exactly is now refused
 * at proposal, naming the field, the value and the column (400, nothing stored), and again at write time (the column
 * may have been retyped since). 12.3 and -9999999999.99 are proposed and written as before.
 */
const CASES = [
  { store: 'postgres', upstream: 'postgres', decimal: 'numeric(12,2)', integer: 'smallint' },
  { store: 'sqlite', upstream: 'mysql', decimal: 'decimal(12,2)', integer: 'smallint' },
] as const

const ACTIONS = {
  set_amount: { description: 'the amount from a parameter', params: { amount: { type: 'number' } }, set: { amount: '{{params.amount}}' } },
  set_count: { description: 'the count from a parameter', params: { count: { type: 'number' } }, set: { count: '{{params.count}}' } },
  rounded: { description: 'a literal amount the column rounds', set: { amount: 0.125 } },
}

for (const { store, upstream: kind, decimal, integer } of CASES) {
  describe(`a number set into a ${kind} ${decimal} or ${integer} column is judged by its value at proposal (${store} store)`, () => {
    let fx: GatewayFixture
    let agent: Caller
    let upstream: AnyUpstream
    before(async () => {
      fx = await startDemoGateway({
        store,
        upstream: kind,
        count: 10,
        edit: (config) => {
          config.resources.amounts = {
            environment: config.resources.subscriptions.environment,
            connector: { kind: 'sql', url: config.resources.subscriptions.connector.url, table: 'amounts' },
            fields: { id: 'string', version: 'integer', amount: 'number', count: 'number', name: 'string' },
            id_field: 'id',
            version_field: 'version',
            review_fields: ['id', 'amount', 'count', 'name'],
            actions: structuredClone(ACTIONS),
          }
        },
      })
      upstream = await openAnyUpstream(fx.upstreamUrl)
      await upstream.exec(`create table amounts (id varchar(10) primary key, version integer not null, amount ${decimal}, count ${integer}, name varchar(10))`)
      await upstream.exec(`insert into amounts (id, version, amount, count, name) values ('a', 1, 1.50, 7, 'n'), ('b', 1, 2.25, 8, 'n')`)
      const token = (await fx.gateway.principals.issue({ name: 'amounts-agent', role: 'agent', scopes: { resources: ['amounts'], actions: '*' } })).token
      agent = caller(fx.base, token)
    })
    after(async () => {
      await upstream?.close()
      await fx?.close()
    })

    const plansOn = async (selectionId: string) => (await fx.gateway.store.db.selectFrom('plans').select('id').where('selection_id', '=', selectionId).execute()).length

    test('more decimals than the column keeps, more digits than it holds, a fraction into an integer column: 400 naming field, value and column, nothing stored', async () => {
      const sel = await agent('POST', '/v1/resources/amounts/selections', { filter: { name: 'n' } })
      assert.equal(sel.status, 201, JSON.stringify(sel.body))
      const wrong = [
        { action: { type: 'set_amount', params: { amount: 12.345 } }, field: 'amount', value: 12.345, column: decimal },
        { action: { type: 'set_amount', params: { amount: 1e13 } }, field: 'amount', value: 1e13, column: decimal },
        { action: { type: 'set_amount', params: { amount: 0.1 + 0.2 } }, field: 'amount', value: 0.1 + 0.2, column: decimal },
        { action: { type: 'rounded' }, field: 'amount', value: 0.125, column: decimal },
        { action: { type: 'set_count', params: { count: 12.5 } }, field: 'count', value: 12.5, column: integer },
        { action: { type: 'set_count', params: { count: 70000 } }, field: 'count', value: 70000, column: integer },
      ]
      for (const w of wrong) {
        const plan = await agent('POST', `/v1/selections/${sel.body.selection_id}/plans`, { action: w.action })
        assert.equal(plan.status, 400, `${JSON.stringify(w.action)}: ${JSON.stringify(plan.body)}`)
        assert.equal(plan.body.error.code, 'invalid_request')
        assert.match(plan.body.error.message, new RegExp(`action "${w.action.type}" sets "${w.field}" to ${String(w.value).replace(/[.+]/g, '\\$&')} where column "${w.field}" of table amounts is ${w.column.replace(/[()]/g, '\\$&')}.*Nothing was proposed`))
        assert.equal(plan.body.error.details.field, w.field)
        assert.equal(plan.body.error.details.value, w.value)
      }
      assert.equal(await plansOn(sel.body.selection_id), 0, 'no plan row is stored')
    })

    test('values the columns keep exactly are proposed, approved, committed and written', async () => {
      for (const [id, action] of [['a', { type: 'set_amount', params: { amount: 12.3 } }], ['b', { type: 'set_amount', params: { amount: -9999999999.99 } }], ['a', { type: 'set_count', params: { count: -32768 } }]] as const) {
        const { plan } = await selectProposeApprove(agent, [fx.as('reviewer')], 'amounts', { filter: { id } }, action)
        const commit = await agent('POST', `/v1/plans/${plan.plan_id}/commit`, { expected_digest: plan.plan_digest }, { 'idempotency-key': `fits-${id}-${action.type}-${kind}` })
        assert.equal(commit.status, 202, JSON.stringify(commit.body))
        const op = await waitForOperation(agent, commit.body.operation_id)
        assert.equal(op.state, 'succeeded', JSON.stringify(op))
      }
      assert.deepEqual((await upstream.rows('select id, amount, count from amounts order by id')).map((r: any) => [r.id, Number(r.amount), Number(r.count)]), [['a', 12.3, -32768], ['b', -9999999999.99, 8]])
    })

    test('a column narrowed after approval: the write is refused at run time, nothing written', async () => {
      await upstream.exec("update amounts set amount = 2.25 where id = 'b'")
      await upstream.exec(`alter table amounts ${kind === 'mysql' ? 'modify amount decimal(12,3)' : 'alter column amount type numeric(12,3)'}`)
      const { plan } = await selectProposeApprove(agent, [fx.as('reviewer')], 'amounts', { filter: { id: 'b' } }, { type: 'set_amount', params: { amount: 1.125 } })
      await upstream.exec(`alter table amounts ${kind === 'mysql' ? 'modify amount decimal(12,2)' : 'alter column amount type numeric(12,2)'}`)
      const before = await upstream.rows("select amount from amounts where id = 'b'")
      const commit = await agent('POST', `/v1/plans/${plan.plan_id}/commit`, { expected_digest: plan.plan_digest }, { 'idempotency-key': `narrowed-${kind}` })
      assert.equal(commit.status, 202, JSON.stringify(commit.body))
      const op = await waitForOperation(agent, commit.body.operation_id)
      assert.notEqual(op.state, 'succeeded', JSON.stringify(op))
      const results = await agent('GET', `/v1/operations/${commit.body.operation_id}/results`)
      const target = results.body.results.find((r: any) => r.id === 'b')
      assert.equal(target.outcome, 'failed', JSON.stringify(target))
      assert.match(target.error, /sets "amount" to 1\.125 where column "amount" of table amounts is .*nothing was written/)
      assert.deepEqual(await upstream.rows("select amount from amounts where id = 'b'"), before)
    })
  })
}
