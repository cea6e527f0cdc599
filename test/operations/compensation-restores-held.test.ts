import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { type GatewayFixture, startDemoGateway } from '../support/gateway-fixture.js'
import { type AnyUpstream, openAnyUpstream } from './support/upstream-connection.js'
import { allResults, caller, selectProposeApprove, waitForOperation, type Caller } from './support/flow.js'
import { addSqlResource } from './support/sql-resource.js'

/**
 * A compensation restores the before-values the ledger recorded, and its proposal is exempt from the set and column
 * fit checks: the records held those values, whatever their type. The sql write still judged them against the
 * columns, so a compensation restoring a value a column held loosely (SQLite's TEXT "abc" among an INTEGER column's
 * integers; a 64-bit integer read as its exact digits, a string in a number field) was proposed and approved, then
 * refused target by target: the reviewer approved an undo that could not run. A write restoring exactly a target's
 * recorded before-value is now not judged against the column (the column held it); what the engine itself refuses
 * fails honestly, nothing written, and never coerced.
 */
const BIG = '9007199254740993'
const CASES = [
  { store: 'sqlite', upstream: 'sqlite', int: 'INTEGER', big: 'INTEGER', loose: true },
  { store: 'postgres', upstream: 'postgres', int: 'integer', big: 'bigint', loose: false },
  { store: 'sqlite', upstream: 'mysql', int: 'int', big: 'bigint', loose: false },
] as const

/** `codes` and `late`: a string code; `ledger`: a number balance; each with a reversible action setting it. */
function addResources(config: any): void {
  const setCode = { set_code: { description: 'set the code', params: { code: { type: 'string' } }, set: { code: '{{params.code}}' }, reversible: true } }
  addSqlResource(config, 'codes', { code: 'string' }, setCode)
  addSqlResource(config, 'late', { code: 'string' }, setCode)
  addSqlResource(config, 'ledger', { balance: 'number' }, { set_balance: { description: 'set the balance', params: { b: { type: 'number' } }, set: { balance: '{{params.b}}' }, reversible: true } })
}

for (const { store, upstream: kind, int, big, loose } of CASES) {
  describe(`a compensation restores what the records held, whatever the column makes of its type (${kind} upstream, ${store} store)`, () => {
    let upstream: AnyUpstream
    let agent: Caller
    let fx: GatewayFixture
    before(async () => {
      fx = await startDemoGateway({ store, upstream: kind, count: 10, edit: addResources })
      upstream = await openAnyUpstream(fx.upstreamUrl)
      await upstream.exec(`create table codes (id varchar(10) primary key, version integer not null, code ${loose ? int : 'varchar(10)'})`)
      // SQLite keeps "abc" as TEXT in an INTEGER column; elsewhere the column is text now and retyped after the operation
      await upstream.exec(`insert into codes (id, version, code) values ('a', 1, 'abc')`)
      await upstream.exec(`create table late (id varchar(10) primary key, version integer not null, code ${loose ? int : 'varchar(10)'})`)
      await upstream.exec(`insert into late (id, version, code) values ('a', 1, 'abc')`)
      await upstream.exec(`create table ledger (id varchar(10) primary key, version integer not null, balance ${big})`)
      await upstream.exec(`insert into ledger (id, version, balance) values ('r1', 1, ${BIG})`)
      const token = (await fx.gateway.principals.issue({ name: 'restore-agent', role: 'agent', scopes: { resources: ['codes', 'late', 'ledger'], actions: '*' } })).token
      agent = caller(fx.base, token)
    })
    after(async () => {
      await upstream?.close()
      await fx?.close()
    })

    /** The operation, run and succeeded: its id. */
    async function run(resource: string, filter: unknown, action: Record<string, unknown>, key: string): Promise<string> {
      const { plan } = await selectProposeApprove(agent, [fx.as('reviewer')], resource, { filter }, action)
      const commit = await agent('POST', `/v1/plans/${plan.plan_id}/commit`, { expected_digest: plan.plan_digest }, { 'idempotency-key': `${key}-${kind}` })
      assert.equal(commit.status, 202, JSON.stringify(commit.body))
      const op = await waitForOperation(agent, commit.body.operation_id)
      assert.equal(op.state, 'succeeded', JSON.stringify(op))
      return op.operation_id
    }

    /** An operation run, then its compensation proposed, approved and committed (`beforeCommit` once approved): the finished compensation. */
    async function runThenUndo(resource: string, filter: unknown, action: Record<string, unknown>, key: string, beforeCommit?: () => Promise<void>): Promise<{ undo: any; op: any }> {
      const operationId = await run(resource, filter, action, key)
      const undo = await agent('POST', `/v1/operations/${operationId}/compensation`)
      assert.equal(undo.status, 201, JSON.stringify(undo.body))
      const approval = await fx.as('reviewer')('POST', `/v1/plans/${undo.body.plan_id}/approvals`, { decision: 'approve', expected_plan_digest: undo.body.plan_digest, comment: 'restore' })
      assert.equal(approval.status, 201, JSON.stringify(approval.body))
      await beforeCommit?.()
      const commit = await agent('POST', `/v1/plans/${undo.body.plan_id}/commit`, { expected_digest: undo.body.plan_digest }, { 'idempotency-key': `${key}-undo-${kind}` })
      assert.equal(commit.status, 202, JSON.stringify(commit.body))
      return { undo: await waitForOperation(agent, commit.body.operation_id), op: undo.body }
    }

    test('a 64-bit integer read as its exact digits (a string in a number field) is restored as it was', async () => {
      const { undo, op } = await runThenUndo('ledger', { id: 'r1' }, { type: 'set_balance', params: { b: 1 } }, 'balance')
      assert.equal(op.changes.summary.find((s: any) => s.field === 'balance').after, BIG)
      assert.equal(undo.state, 'succeeded', JSON.stringify(await allResults(agent, undo.operation_id)))
      assert.deepEqual((await upstream.rows(`select cast(balance as ${kind === 'mysql' ? 'char' : 'text'}) as b from ledger`)).map((r: any) => r.b), [BIG])
    })

    if (loose) {
      test('TEXT an INTEGER column held ("abc") is restored as it was', async () => {
        const { undo } = await runThenUndo('codes', { id: 'a' }, { type: 'set_code', params: { code: '42' } }, 'code')
        assert.equal(undo.state, 'succeeded', JSON.stringify(await allResults(agent, undo.operation_id)))
        assert.deepEqual(await upstream.rows(`select code, typeof(code) as t from codes where id = 'a'`), [{ code: 'abc', t: 'text' }])
      })
    } else {
      const retype = (table: string) => (kind === 'postgres' ? `alter table ${table} alter column code type integer using code::integer` : `alter table ${table} modify code int`)

      test('a before-value the column, retyped since, cannot hold: the compensation is refused at proposal, 409 naming the record, field, value and column', async () => {
        const operationId = await run('codes', { id: 'a' }, { type: 'set_code', params: { code: '42' } }, 'code')
        await upstream.exec(retype('codes'))
        const undo = await agent('POST', `/v1/operations/${operationId}/compensation`)
        assert.equal(undo.status, 409, JSON.stringify(undo.body))
        assert.equal(undo.body.error.code, 'conflict')
        assert.match(undo.body.error.message, /record "a" cannot be restored: its recorded before-value of "code", "abc", cannot be written back as it was .*column "code" of table codes is (integer|int) now/)
        assert.deepEqual({ ...undo.body.error.details, column_type: undefined }, { id: 'a', field: 'code', value: 'abc', column_type: undefined })
        assert.equal((await fx.gateway.store.db.selectFrom('plans').select('id').where('compensates', '=', operationId).execute()).length, 0)
      })

      test('retyped after approval: the write refuses it before sending, the same judgement, nothing written, never coerced', async () => {
        const { undo } = await runThenUndo('late', { id: 'a' }, { type: 'set_code', params: { code: '42' } }, 'late', () => upstream.exec(retype('late')))
        const results = await allResults(agent, undo.operation_id)
        assert.notEqual(undo.state, 'succeeded', JSON.stringify(results))
        assert.equal(results.length, 1)
        assert.equal(results[0].outcome, 'failed', JSON.stringify(results))
        assert.equal(results[0].reason, 'write_refused', JSON.stringify(results))
        assert.match(results[0].error, /sets "code" to "abc" where field "code" is declared string, but column "code" of table late is/)
        assert.deepEqual((await upstream.rows(`select code from late where id = 'a'`)).map((r: any) => String(r.code)), ['42'])
      })
    }
  })
}
