import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { type GatewayFixture, startDemoGateway } from '../support/gateway-fixture.js'
import { type AnyUpstream, openAnyUpstream } from '../operations/support/upstream-connection.js'
import { caller, selectProposeApprove, waitForOperation, type Caller } from '../operations/support/flow.js'

/**
 * A field declared `string` over an integer column (a code kept as a number) fits the misfit judgement: equality
 * holds on the text a record shows. But `set: {code: "abc"}`, literal or from a parameter, was proposed, approved
 * and committed, and only then did PostgreSQL refuse it (22P02), MariaDB refuse or zero it, and SQLite keep it as
 * TEXT among integers. The value itself is now judged against the column: "abc", "42.5", "" and "042" are refused
 * at proposal (400 naming the field, the value and the column type, nothing stored); "42" is proposed, approved,
 * committed and written as before. Each engine as the upstream.
 */
const CASES = [
  { store: 'sqlite', upstream: 'sqlite', column: 'INTEGER', shown: 'INTEGER' },
  { store: 'postgres', upstream: 'postgres', column: 'integer', shown: 'integer' },
  { store: 'sqlite', upstream: 'mysql', column: 'int', shown: 'int' },
] as const

const ACTIONS = {
  code_abc: { description: 'a literal code no integer column holds', set: { code: 'abc' } },
  code_42: { description: 'a literal code an integer column holds', set: { code: '42' } },
  set_code: { description: 'the code from a parameter', params: { code: { type: 'string' } }, set: { code: '{{params.code}}' } },
}

for (const { store, upstream: kind, column, shown } of CASES) {
  describe(`a string set into a ${kind} integer column is judged by its value at proposal (${store} store)`, () => {
    let fx: GatewayFixture
    let agent: Caller
    let upstream: AnyUpstream
    before(async () => {
      fx = await startDemoGateway({
        store,
        upstream: kind,
        count: 10,
        edit: (config) => {
          config.resources.codes = {
            environment: config.resources.subscriptions.environment,
            connector: { kind: 'sql', url: config.resources.subscriptions.connector.url, table: 'codes' },
            fields: { id: 'string', version: 'integer', code: 'string', name: 'string' },
            id_field: 'id',
            version_field: 'version',
            review_fields: ['id', 'code', 'name'],
            actions: structuredClone(ACTIONS),
          }
        },
      })
      upstream = await openAnyUpstream(fx.upstreamUrl)
      await upstream.exec(`create table codes (id varchar(10) primary key, version integer not null, code ${column}, name varchar(10))`)
      await upstream.exec(`insert into codes (id, version, code, name) values ('a', 1, 7, 'n'), ('b', 1, 8, 'n')`)
      const token = (await fx.gateway.principals.issue({ name: 'codes-agent', role: 'agent', scopes: { resources: ['codes'], actions: '*' } })).token
      agent = caller(fx.base, token)
    })
    after(async () => {
      await upstream?.close()
      await fx?.close()
    })

    const plansOn = async (selectionId: string) => (await fx.gateway.store.db.selectFrom('plans').select('id').where('selection_id', '=', selectionId).execute()).length

    test('a literal and a parameter the column cannot hold as written: 400 naming the field, the value and the column type, nothing stored', async () => {
      const sel = await agent('POST', '/v1/resources/codes/selections', { filter: { name: 'n' } })
      assert.equal(sel.status, 201, JSON.stringify(sel.body))
      const wrong = [{ type: 'code_abc' }, ...['abc', '42.5', '', '042'].map((code) => ({ type: 'set_code', params: { code } }))]
      for (const action of wrong) {
        const value = action.type === 'code_abc' ? 'abc' : (action as { params: { code: string } }).params.code
        const plan = await agent('POST', `/v1/selections/${sel.body.selection_id}/plans`, { action })
        assert.equal(plan.status, 400, `${JSON.stringify(action)}: ${JSON.stringify(plan.body)}`)
        assert.equal(plan.body.error.code, 'invalid_request')
        assert.match(plan.body.error.message, new RegExp(`action "${action.type}" sets "code" to ${JSON.stringify(value).replace(/[.]/g, '\\.')} where field "code" is declared string, but column "code" of table codes is ${shown}.*Nothing was proposed`))
        assert.deepEqual(plan.body.error.details, { action: action.type, field: 'code', value, column_type: shown })
      }
      assert.equal(await plansOn(sel.body.selection_id), 0, 'no plan row is stored')
    })

    test('a proposal reads the catalogue once (was twice: the column misfits, then the string columns, one after the other)', async () => {
      const sel = await agent('POST', '/v1/resources/codes/selections', { filter: { name: 'n' } })
      assert.equal(sel.status, 201, JSON.stringify(sel.body))
      const columnReads = async () => (await fx.gateway.store.db.selectFrom('audit_events').select('action').where('action', 'like', '%catalogue: columns of table codes%').execute()).length
      const before = await columnReads()
      const plan = await agent('POST', `/v1/selections/${sel.body.selection_id}/plans`, { action: { type: 'code_42' } })
      assert.equal(plan.status, 201, JSON.stringify(plan.body))
      await fx.gateway.audit.flush()
      assert.equal((await columnReads()) - before, 1)
    })

    test('"42", literal and from a parameter, is proposed, approved, committed and written', async () => {
      for (const [id, action] of [['a', { type: 'code_42' }], ['b', { type: 'set_code', params: { code: '-5' } }]] as const) {
        const { plan } = await selectProposeApprove(agent, [fx.as('reviewer')], 'codes', { filter: { id } }, action)
        const commit = await agent('POST', `/v1/plans/${plan.plan_id}/commit`, { expected_digest: plan.plan_digest }, { 'idempotency-key': `fits-${id}-${kind}` })
        assert.equal(commit.status, 202, JSON.stringify(commit.body))
        const op = await waitForOperation(agent, commit.body.operation_id)
        assert.equal(op.state, 'succeeded', JSON.stringify(op))
      }
      assert.deepEqual((await upstream.rows('select id, code from codes order by id')).map((r: any) => [r.id, Number(r.code)]), [['a', 42], ['b', -5]])
    })
  })
}
