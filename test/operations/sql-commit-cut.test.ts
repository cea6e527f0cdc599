import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import mysql from 'mysql2/promise'
import pg from 'pg'
import { ensureDemoData } from '../../src/demo/index.js'
import { mysqlErrPacket, startCuttingProxy, type CuttingProxy } from '../connectors/sql/support/cutting-proxy.js'
import { startDemoGateway, type GatewayFixture } from '../support/gateway-fixture.js'
import { createTestMysqlDatabase, createTestPostgresDatabase, type TestDatabase } from '../support/stores.js'
import { allResults, selectProposeApprove, waitForOperation } from './support/flow.js'

const HOLD = { type: 'hold' }
const SETTLE_SECONDS = 60

type Dialect = 'mysql' | 'postgres'
/** Where the proxy cuts: the write's COMMIT (dropped, or forwarded; on MariaDB also forwarded and answered an error), or its autocommitted UPDATE. */
type Cut = { readonly at: 'COMMIT' | 'UPDATE'; readonly when: 'before' | 'after'; readonly answer?: Buffer }

/** Every row's version as the server holds it, by id, over the test's own connection. */
async function versionsOf(dialect: Dialect, url: string): Promise<Map<string, number>> {
  let rows: { id: string; version: number }[]
  if (dialect === 'postgres') {
    const client = new pg.Client({ connectionString: url })
    await client.connect()
    try {
      rows = (await client.query('select id, version from subscriptions')).rows
    } finally {
      await client.end()
    }
  } else {
    const conn = await mysql.createConnection(url)
    try {
      rows = (await conn.query('select id, version from subscriptions'))[0] as { id: string; version: number }[]
    } finally {
      await conn.end()
    }
  }
  return new Map(rows.map((r) => [r.id, Number(r.version)]))
}

/**
 * A bulk change over the `sql` connector on a real MariaDB or PostgreSQL server, a loopback TCP proxy between them
 * that cuts the connection of one write: at its COMMIT, dropped (the server never committed: nothing was written,
 * but the gateway cannot know) or forwarded (the server committed); on MariaDB also a COMMIT the server committed
 * and the client was answered 1205 (lock wait timeout); on PostgreSQL without a trigger, the autocommitted UPDATE.
 * Each must end that target `unknown` in the ledger (results and the operation's view), never "nothing was
 * written", and reconcile must then settle it by reading the row again: `succeeded` where it landed, `failed`
 * `not_applied` where it did not (past the settle window, the clock moved on).
 */
function cutCase(dialect: Dialect, cut: Cut, trigger: boolean, applied: boolean): void {
  describe(`${dialect}: a write cut at its ${cut.at} ${cut.when} it reached the server${cut.answer ? ' (answered an error)' : ''}`, () => {
    let upstream: TestDatabase
    let proxy: CuttingProxy
    let fx: GatewayFixture
    let offsetMs = 0
    before(async () => {
      upstream = dialect === 'postgres' ? await createTestPostgresDatabase() : await createTestMysqlDatabase()
      await ensureDemoData({ url: upstream.url, count: 30 })
      if (trigger) {
        const client = new pg.Client({ connectionString: upstream.url })
        await client.connect()
        await client.query('create function touch() returns trigger language plpgsql as $$ begin return new; end $$')
        await client.query('create trigger touch before update on subscriptions for each row execute function touch()')
        await client.end()
      }
      const direct = new URL(upstream.url)
      proxy = await startCuttingProxy({ host: direct.hostname, port: Number(direct.port) })
      const through = new URL(upstream.url)
      through.port = String(proxy.port)
      fx = await startDemoGateway({
        store: 'sqlite',
        count: 1,
        clock: () => new Date(Date.now() + offsetMs),
        edit: (raw) => {
          raw.resources.subscriptions.connector.url = through.toString()
          if (dialect === 'postgres') raw.resources.subscriptions.connector.write_window = 1
          raw.resources.subscriptions.actions.hold = { description: 'Tag on hold', set: { tags: ['on-hold'] }, precondition: { status: 'past_due' } }
          raw.execution = { concurrency: 1, reconcile_settle_seconds: SETTLE_SECONDS }
        },
      })
    })
    after(async () => {
      await fx?.close()
      await proxy?.close()
      await upstream?.drop()
    })

    test(`the target is unknown, then reconciled ${applied ? 'succeeded (it landed)' : 'failed, not_applied (it did not)'}`, async () => {
      const agent = fx.as('agent')
      const { selection } = await selectProposeApprove(agent, [fx.as('reviewer'), fx.as('reviewer2')], 'subscriptions', { filter: { status: 'past_due' } }, HOLD)
      assert.ok(selection.count >= 2, `${selection.count} past-due records`)
      const frozen = await versionsOf(dialect, upstream.url)
      const statement = dialect === 'mysql' ? 'update `subscriptions`' : 'update "subscriptions"'
      if (cut.at === 'COMMIT') proxy.arm('COMMIT', cut.when, cut.answer, statement)
      else proxy.arm(statement, cut.when)
      const commit = await agent('POST', '/v1/resources/subscriptions/bulk-actions', { selection_id: selection.selection_id, expected_digest: selection.digest, action: HOLD }, { 'idempotency-key': 'cut' })
      assert.equal(commit.status, 202, JSON.stringify(commit.body))
      const operation = await waitForOperation(agent, commit.body.operation_id)
      assert.equal(proxy.cuts, 1)
      assert.equal(operation.state, 'completed_with_unknown', JSON.stringify(operation))
      assert.deepEqual([operation.counts.unknown, operation.counts.succeeded, operation.counts.failed], [1, selection.count - 1, 0])
      const [lost] = await allResults(agent, operation.operation_id, 'unknown')
      assert.ok(lost, 'one unknown result')
      assert.doesNotMatch(lost.error ?? '', /nothing was written|rolled back|retried/, JSON.stringify(lost))
      assert.deepEqual([lost.reason, lost.after], ['upstream_unknown', null])
      const stored = (await versionsOf(dialect, upstream.url)).get(lost.id)
      assert.equal(stored, frozen.get(lost.id)! + (applied ? 1 : 0), `the row ${applied ? 'was' : 'was not'} written: ${JSON.stringify(lost)}`)

      offsetMs += (SETTLE_SECONDS + 1) * 1000
      const report = await agent('POST', `/v1/operations/${operation.operation_id}/reconcile`)
      assert.equal(report.status, 200, JSON.stringify(report.body))
      assert.deepEqual([report.body.examined, report.body.succeeded, report.body.failed], [1, applied ? 1 : 0, applied ? 0 : 1], JSON.stringify(report.body))
      const settled = (await allResults(agent, operation.operation_id)).find((r) => r.id === lost.id)
      assert.deepEqual([settled.outcome, settled.reason], applied ? ['succeeded', 'reconciled'] : ['failed', 'not_applied'], JSON.stringify(settled))
      assert.equal(report.body.operation.state, applied ? 'succeeded' : 'partially_failed')
      assert.equal((await versionsOf(dialect, upstream.url)).get(lost.id), stored, 'reconciling never writes')
    })
  })
}

cutCase('mysql', { at: 'COMMIT', when: 'before' }, false, false)
cutCase('mysql', { at: 'COMMIT', when: 'after' }, false, true)
cutCase('mysql', { at: 'COMMIT', when: 'after', answer: mysqlErrPacket(1205, 'HY000', 'Lock wait timeout exceeded; try restarting transaction') }, false, true)
cutCase('postgres', { at: 'COMMIT', when: 'before' }, true, false)
cutCase('postgres', { at: 'COMMIT', when: 'after' }, true, true)
cutCase('postgres', { at: 'UPDATE', when: 'before' }, false, false)
cutCase('postgres', { at: 'UPDATE', when: 'after' }, false, true)
