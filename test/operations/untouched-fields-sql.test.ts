import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { type GatewayFixture, startDemoGateway } from '../support/gateway-fixture.js'
import { type AnyUpstream, openAnyUpstream } from './support/upstream-connection.js'
import { allResults, caller, selectProposeApprove, waitForOperation, type Caller } from './support/flow.js'
import { addSqlResource } from './support/sql-resource.js'

/**
 * An operation on a PostgreSQL or SQLite table whose UPDATE moves a column the action does not set (a trigger that
 * rewrites `note` when a record is closed; a generated column over `amount`) committed that column's new value, which
 * no reviewer approved, and halted only afterwards. Each target is now refused before COMMIT, naming the field, and
 * the table keeps what it held (a window of targets and a single one alike).
 */
const TABLES = {
  postgres: [
    `create table things (id varchar(10) primary key, version integer not null, status text not null, note text)`,
    `create function shout() returns trigger language plpgsql as $$
       begin if new.status = 'closed' then new.note := upper(new.note); end if; return new; end $$`,
    'create trigger shout before update on things for each row execute function shout()',
    `create table sums (id varchar(10) primary key, version integer not null, amount integer not null,
       twice integer generated always as (amount * 2) stored)`,
  ],
  sqlite: [
    'create table things (id text primary key, version integer not null, status text not null, note text)',
    `create trigger shout after update of status on things when new.status = 'closed'
       begin update things set note = upper(note) where id = new.id; end`,
    `create table sums (id text primary key, version integer not null, amount integer not null,
       twice integer generated always as (amount * 2) stored)`,
  ],
} as const

function addResources(config: any): void {
  addSqlResource(config, 'things', { status: 'string', note: 'string' }, { close: { description: 'close', set: { status: 'closed' } } })
  addSqlResource(config, 'sums', { amount: 'integer', twice: 'integer' }, { set_amount: { description: 'set the amount', params: { a: { type: 'number' } }, set: { amount: '{{params.a}}' } } })
}

for (const kind of ['postgres', 'sqlite'] as const) {
  describe(`an operation on ${kind} whose UPDATE moves a column the action does not set`, () => {
    let upstream: AnyUpstream
    let agent: Caller
    let fx: GatewayFixture
    before(async () => {
      fx = await startDemoGateway({ store: 'sqlite', upstream: kind, count: 10, edit: addResources })
      upstream = await openAnyUpstream(fx.upstreamUrl)
      for (const statement of TABLES[kind]) await upstream.exec(statement)
      await upstream.exec(`insert into things (id, version, status, note) values ('a', 1, 'open', 'quiet'), ('b', 1, 'open', 'quiet'), ('c', 1, 'open', 'quiet')`)
      await upstream.exec(`insert into sums (id, version, amount) values ('a', 1, 1), ('b', 1, 1), ('c', 1, 1)`)
      const token = (await fx.gateway.principals.issue({ name: 'untouched-agent', role: 'agent', scopes: { resources: ['things', 'sums'], actions: '*' } })).token
      agent = caller(fx.base, token)
    })
    after(async () => {
      await upstream?.close()
      await fx?.close()
    })

    async function run(resource: string, filter: unknown, action: Record<string, unknown>, key: string): Promise<{ op: any; results: any[] }> {
      const { plan } = await selectProposeApprove(agent, [fx.as('reviewer')], resource, { filter }, action)
      const commit = await agent('POST', `/v1/plans/${plan.plan_id}/commit`, { expected_digest: plan.plan_digest }, { 'idempotency-key': `${key}-${kind}` })
      assert.equal(commit.status, 202, JSON.stringify(commit.body))
      const op = await waitForOperation(agent, commit.body.operation_id)
      return { op, results: await allResults(agent, op.operation_id) }
    }
    const refused = (results: any[], field: string, count: number) => {
      assert.equal(results.length, count, JSON.stringify(results))
      for (const r of results) {
        assert.notEqual(r.outcome, 'succeeded', JSON.stringify(r))
        assert.match(String(r.error ?? r.message ?? JSON.stringify(r)), new RegExp(`changed "${field}", which the action does not set[^]*nothing was written`), JSON.stringify(r))
      }
    }

    test('a trigger rewriting an unset column: every target refused naming it, the table as it was', async () => {
      const { op, results } = await run('things', { id: { in: ['a', 'b', 'c'] } }, { type: 'close' }, 'close')
      assert.notEqual(op.state, 'succeeded', JSON.stringify(op))
      refused(results, 'note', 3)
      const rows = (await upstream.rows('select id, version, status, note from things order by id')) as any[]
      assert.deepEqual(rows.map((r) => [r.id, Number(r.version), r.status, r.note]), [['a', 1, 'open', 'quiet'], ['b', 1, 'open', 'quiet'], ['c', 1, 'open', 'quiet']])
    })

    test('a generated column over the set column: every target refused naming it, the table as it was', async () => {
      const { op, results } = await run('sums', { id: { in: ['a', 'b', 'c'] } }, { type: 'set_amount', params: { a: 5 } }, 'amount')
      assert.notEqual(op.state, 'succeeded', JSON.stringify(op))
      refused(results, 'twice', 3)
      const rows = (await upstream.rows('select id, version, amount, twice from sums order by id')) as any[]
      assert.deepEqual(rows.map((r) => [r.id, Number(r.version), Number(r.amount), Number(r.twice)]), [['a', 1, 1, 2], ['b', 1, 1, 2], ['c', 1, 1, 2]])
    })
  })
}
