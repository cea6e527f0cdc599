import assert from 'node:assert/strict'
import { join } from 'node:path'
import { after, before, describe, test } from 'node:test'
import BetterSqlite3 from 'better-sqlite3'
import pg from 'pg'
import { type GatewayFixture, startDemoGateway } from '../support/gateway-fixture.js'
import { createTestPostgresDatabase, type TestDatabase } from '../support/stores.js'
import { allResults, caller, waitForOperation } from './support/flow.js'

/**
 * Balances a double cannot hold: a 64-bit integer column on SQLite (2^53 + 1), a numeric(40, 2) on PostgreSQL.
 * A record shows them as their exact digits, and the rules Warrant evaluates in memory compared those digits
 * with the rule's number as a string no number equals: an exclusion rule `balance ≥ 1,000,000` kept the largest
 * balance in the selection, a flag for large balances flagged none (so a standing approval waived review), the
 * plan's count of targets failing the precondition counted it, and the executor skipped it saying it "no longer
 * meets the precondition", which it did. Each is now decided by value, as the engine's own filter decides it.
 */
const LEDGERS = {
  sqlite: { big: '9007199254740993', column: 'integer', at: 'text' },
  postgres: { big: '12345678901234567.89', column: 'numeric(40, 2)', at: 'timestamptz' },
} as const

/** r1 and r4 small, r2 past a double, r3 its negative: the precondition (balance > 0) fails for r3 alone. */
const rows = (big: string) => [
  ['r1', '5'],
  ['r2', big],
  ['r3', `-${big}`],
  ['r4', '500'],
]

const LARGE = { balance: { gte: 1_000_000 } }

describe('numbers past a double in exclusion rules, flags and preconditions', () => {
  let fx: GatewayFixture
  let pgDb: TestDatabase
  let agent: ReturnType<typeof caller>
  before(async () => {
    pgDb = await createTestPostgresDatabase()
    const client = new pg.Client({ connectionString: pgDb.url })
    await client.connect()
    await client.query(`create table ledger (id text primary key, version integer not null, status text not null, balance ${LEDGERS.postgres.column}, held_at ${LEDGERS.postgres.at})`)
    for (const [id, balance] of rows(LEDGERS.postgres.big)) await client.query(`insert into ledger (id, version, status, balance) values ('${id}', 1, 'open', ${balance})`)
    await client.end()
    let file = ''
    fx = await startDemoGateway({
      store: 'sqlite',
      count: 10,
      edit: (raw) => {
        file = join(raw.store.slice('sqlite:'.length), '..', 'ledger.db')
        for (const kind of ['sqlite', 'postgres'] as const)
          raw.resources[`ledger_${kind}`] = {
            environment: raw.resources.subscriptions.environment,
            connector: { kind: 'sql', url: kind === 'sqlite' ? `sqlite:${file}` : pgDb.url, table: 'ledger' },
            fields: { id: 'string', version: 'integer', status: 'string', balance: 'number', held_at: 'timestamp' },
            id_field: 'id',
            version_field: 'version',
            review_fields: ['id', 'status', 'balance'],
            standing_approvals: [{ name: 'small-holds', selector: { status: 'open' }, action: 'hold', max_count: 10, flagged: LARGE }],
            actions: {
              hold: { description: 'hold an open account', set: { status: 'held' }, precondition: { balance: { gt: 0 } } },
              // a timestamp in another spelling than the one PostgreSQL answers with
              stamp: { description: 'stamp when it was held', set: { held_at: '2024-06-01T14:00:00+02:00' } },
            },
          }
        const db = new BetterSqlite3(file)
        db.exec(`create table ledger (id text primary key, version integer not null, status text not null, balance ${LEDGERS.sqlite.column}, held_at ${LEDGERS.sqlite.at})`)
        for (const [id, balance] of rows(LEDGERS.sqlite.big)) db.exec(`insert into ledger (id, version, status, balance) values ('${id}', 1, 'open', ${balance})`)
        db.close()
      },
    })
    const token = (await fx.gateway.principals.issue({ name: 'ledger-agent', role: 'agent', scopes: { resources: ['ledger_sqlite', 'ledger_postgres'], actions: '*' } })).token
    agent = caller(fx.base, token)
  })
  after(async () => {
    await fx?.close()
    await pgDb?.drop()
  })

  for (const kind of ['sqlite', 'postgres'] as const) {
    const resource = `ledger_${kind}`
    const { big } = LEDGERS[kind]

    test(`${kind}: the balance shows its exact digits, and an exclusion rule on it excludes it`, async () => {
      const made = await agent('POST', `/v1/resources/${resource}/selections`, { filter: {}, exclude: [{ rule: 'large', filter: LARGE }] })
      assert.equal(made.status, 201, JSON.stringify(made.body))
      assert.equal(made.body.complete, true)
      assert.deepEqual(
        made.body.records.map((r: { id: string; fields: { balance: unknown } }) => [r.id, r.fields.balance]),
        [['r1', 5], ['r3', `-${big}`], ['r4', 500]],
      )
      const excluded = await agent('GET', `/v1/selections/${made.body.selection_id}/excluded?rule=large`)
      assert.equal(excluded.status, 200, JSON.stringify(excluded.body))
      assert.deepEqual(excluded.body.records.map((r: { id: string }) => r.id), ['r2'])
    })

    test(`${kind}: the flag for large balances flags it, so the standing approval does not waive review; the plan counts one target failing the precondition`, async () => {
      const selection = await agent('POST', `/v1/resources/${resource}/selections`, { filter: { status: 'open' } })
      assert.equal(selection.status, 201, JSON.stringify(selection.body))
      const plan = await agent('POST', `/v1/selections/${selection.body.selection_id}/plans`, { action: { type: 'hold' } })
      assert.ok(plan.status === 201 || plan.status === 200, JSON.stringify(plan.body))
      assert.equal(plan.body.approval.standing_approval, null, JSON.stringify(plan.body.approval))
      assert.equal(plan.body.approval.reviewers_needed, 1)
      assert.match(plan.body.approval.reason, /1 member\(s\) match its flagged filter .*\(r2\)/)
      assert.equal(plan.body.precondition.failing_now, 1, JSON.stringify(plan.body.precondition))

      const approval = await fx.as('reviewer')('POST', `/v1/plans/${plan.body.plan_id}/approvals`, { decision: 'approve', expected_plan_digest: plan.body.plan_digest, comment: 'r2 is large; hold it too' })
      assert.equal(approval.status, 201, JSON.stringify(approval.body))
      const commit = await agent('POST', `/v1/resources/${resource}/bulk-actions`, { selection_id: selection.body.selection_id, expected_digest: selection.body.digest, action: { type: 'hold' } }, { 'idempotency-key': `hold-${kind}` })
      assert.equal(commit.status, 202, JSON.stringify(commit.body))
      const operation = await waitForOperation(agent, commit.body.operation_id)
      // r2 meets the precondition (balance > 0) and is written; r3 alone does not
      assert.deepEqual([operation.counts.succeeded, operation.counts.skipped, operation.counts.failed], [3, 1, 0], JSON.stringify(operation.counts))
      const skipped = await allResults(agent, operation.operation_id, 'skipped')
      assert.deepEqual(skipped.map((r) => [r.id, r.reason]), [['r3', 'precondition_failed']])
      const succeeded = await allResults(agent, operation.operation_id, 'succeeded')
      assert.deepEqual(succeeded.map((r) => r.id).sort(), ['r1', 'r2', 'r4'])
    })

    test(`${kind}: a timestamp the upstream answers in another spelling is the instant written: every target succeeds`, async () => {
      const { selection, plan } = await (async () => {
        const made = await agent('POST', `/v1/resources/${resource}/selections`, { filter: {} })
        assert.equal(made.status, 201, JSON.stringify(made.body))
        const proposed = await agent('POST', `/v1/selections/${made.body.selection_id}/plans`, { action: { type: 'stamp' } })
        assert.ok(proposed.status === 201 || proposed.status === 200, JSON.stringify(proposed.body))
        return { selection: made.body, plan: proposed.body }
      })()
      const approval = await fx.as('reviewer')('POST', `/v1/plans/${plan.plan_id}/approvals`, { decision: 'approve', expected_plan_digest: plan.plan_digest, comment: 'stamp them' })
      assert.equal(approval.status, 201, JSON.stringify(approval.body))
      const commit = await agent('POST', `/v1/resources/${resource}/bulk-actions`, { selection_id: selection.selection_id, expected_digest: selection.digest, action: { type: 'stamp' } }, { 'idempotency-key': `stamp-${kind}` })
      assert.equal(commit.status, 202, JSON.stringify(commit.body))
      const operation = await waitForOperation(agent, commit.body.operation_id)
      assert.equal(operation.state, 'succeeded', JSON.stringify(operation))
      assert.equal(operation.counts.succeeded, 4)
    })
  }
})
