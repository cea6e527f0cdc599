import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { type GatewayFixture, startDemoGateway } from '../support/gateway-fixture.js'
import { type AnyUpstream, openAnyUpstream } from './support/upstream-connection.js'
import { allResults, caller, selectProposeApprove, waitForOperation, type Caller } from './support/flow.js'
import { addSqlResource } from './support/sql-resource.js'

/**
 * An operation on a PostgreSQL or SQLite table whose trigger rewrites a column the action sets (the reviewer
 * approved status "Paused", the trigger lowercases it): the write committed "paused" and the executor failed the
 * target `effect_contradicted` and halted only once it was in the table, where MySQL refused it before COMMIT. Now
 * every engine refuses it before COMMIT: the target `failed` (`rejected`), naming the field, the value approved and
 * the value the table would have kept; its row as it was; the other targets of its window written.
 */
const TABLES = {
  postgres: [
    'create table things (id varchar(10) primary key, version integer not null, status text not null)',
    `create function lower_b() returns trigger language plpgsql as $$
       begin if new.id = 'b' then new.status := lower(new.status); end if; return new; end $$`,
    'create trigger lower_b before update on things for each row execute function lower_b()',
  ],
  sqlite: [
    'create table things (id text primary key, version integer not null, status text not null)',
    `create trigger lower_b after update of status on things when new.id = 'b' and new.status <> lower(new.status)
       begin update things set status = lower(new.status) where id = new.id; end`,
  ],
  // MySQL refused it before COMMIT already: here to show the same outcome in the same words on every engine
  mysql: [
    'create table things (id varchar(10) primary key, version integer not null, status varchar(20) not null)',
    `create trigger lower_b before update on things for each row begin if new.id = 'b' then set new.status = lower(new.status); end if; end`,
  ],
} as const

for (const kind of ['postgres', 'sqlite', 'mysql'] as const) {
  describe(`an operation on ${kind} whose trigger rewrites the value the action sets`, () => {
    let upstream: AnyUpstream
    let agent: Caller
    let fx: GatewayFixture
    before(async () => {
      fx = await startDemoGateway({ store: 'sqlite', upstream: kind, count: 10, edit: (config) => addSqlResource(config, 'things', { status: 'string' }, { pause: { description: 'pause', set: { status: 'Paused' } } }) })
      upstream = await openAnyUpstream(fx.upstreamUrl)
      for (const statement of TABLES[kind]) await upstream.exec(statement)
      await upstream.exec(`insert into things (id, version, status) values ('a', 1, 'open'), ('b', 1, 'open'), ('c', 1, 'open')`)
      const token = (await fx.gateway.principals.issue({ name: 'set-trigger-agent', role: 'agent', scopes: { resources: ['things'], actions: '*' } })).token
      agent = caller(fx.base, token)
    })
    after(async () => {
      await upstream?.close()
      await fx?.close()
    })

    test('the rewritten target is refused before COMMIT naming both values; its row as it was, the others written', async () => {
      const { plan } = await selectProposeApprove(agent, [fx.as('reviewer')], 'things', { filter: { id: { in: ['a', 'b', 'c'] } } }, { type: 'pause' })
      const commit = await agent('POST', `/v1/plans/${plan.plan_id}/commit`, { expected_digest: plan.plan_digest }, { 'idempotency-key': `pause-${kind}` })
      assert.equal(commit.status, 202, JSON.stringify(commit.body))
      const op = await waitForOperation(agent, commit.body.operation_id)
      const results = await allResults(agent, op.operation_id)
      const byId = new Map(results.map((r: any) => [r.id, r]))
      const b = byId.get('b') as any
      assert.deepEqual([b?.outcome ?? b?.state, b?.reason], ['failed', 'rejected'], JSON.stringify(results))
      assert.match(String(b.error ?? b.message), /column "status" of record "b" would hold "paused" where "Paused" was asked[^]*rolled back, nothing was written/, JSON.stringify(b))
      for (const id of ['a', 'c']) assert.equal((byId.get(id) as any)?.outcome ?? (byId.get(id) as any)?.state, 'succeeded', JSON.stringify(results))
      const rows = (await upstream.rows('select id, version, status from things order by id')) as any[]
      assert.deepEqual(rows.map((r) => [r.id, Number(r.version), r.status]), [['a', 2, 'Paused'], ['b', 1, 'open'], ['c', 2, 'Paused']])
    })
  })
}
