import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { ensureDemoData } from '../../src/demo/index.js'
import { startDemoGateway, type GatewayFixture } from '../support/gateway-fixture.js'
import { createTestMysqlDatabase, createTestPostgresDatabase, type TestDatabase } from '../support/stores.js'
import { allResults, selectProposeApprove, waitForOperation } from './support/flow.js'
import { openUpstream } from './support/upstream-connection.js'

const HOLD = { type: 'hold' }

/**
 * A write the database refused for a lock (MariaDB 1205 lock wait timeout on the UPDATE, PostgreSQL 55P03
 * lock_timeout) is `rate_limited`, retried later; the database rolled the statement back before any COMMIT was
 * sent, so nothing was written. When the operation halted while that target waited for its retry (MariaDB: the other
 * target's write refused by a CHECK constraint, halt_after_validation_failures 1; PostgreSQL: max_rate_limit_retries
 * run out on the lock itself), the halt turned it `unknown`
 * `rate_limited_halted` ("the upstream may have applied it all the same"), which the database had proven false.
 * It now stays pending (reason rate_limited, its hit counted), and the row is as it was.
 */
for (const dialect of ['mysql', 'postgres'] as const) {
  describe(`${dialect}: an operation halted while a write refused for a lock waits for its retry`, () => {
    let upstream: TestDatabase
    let holder: Awaited<ReturnType<typeof openUpstream>>
    let fx: GatewayFixture
    let ids: string[] = []
    let versions = new Map<string, number>()
    before(async () => {
      upstream = dialect === 'postgres' ? await createTestPostgresDatabase() : await createTestMysqlDatabase()
      await ensureDemoData({ url: upstream.url, count: 30 })
      const admin = await openUpstream(dialect, upstream.url)
      const rows = await admin.run(`select id, version from subscriptions where status = 'past_due' order by id`)
      ids = rows.slice(0, 2).map((r) => String(r.id))
      versions = new Map(rows.map((r) => [String(r.id), Number(r.version)]))
      const [, refused] = ids
      await admin.run(`alter table subscriptions add constraint refused_write check (id <> '${refused}' or version <= ${versions.get(refused!)})`)
      if (dialect === 'postgres') await admin.run(`alter database ${new URL(upstream.url).pathname.slice(1)} set lock_timeout = '300ms'`)
      await admin.close()
      holder = await openUpstream(dialect, upstream.url)
      await holder.run(dialect === 'postgres' ? 'begin' : 'start transaction')
      await holder.run(`select id from subscriptions where id = '${ids[0]}' for update`)
      fx = await startDemoGateway({
        store: 'sqlite',
        count: 1,
        edit: (raw) => {
          raw.resources.subscriptions.connector.url = upstream.url
          raw.resources.subscriptions.actions.hold = { description: 'Tag on hold', set: { tags: ['on-hold'] }, precondition: { status: 'past_due' } }
          // one UPDATE per target: a window holding both would wait on the lock as a whole
          if (dialect === 'postgres') raw.resources.subscriptions.connector.write_window = 1
          raw.execution = { concurrency: 2, halt_after_validation_failures: 1 }
        },
      })
    })
    after(async () => {
      await holder?.run('rollback').catch(() => undefined)
      await holder?.close()
      await fx?.close()
      await upstream?.drop()
    })

    test('the locked target stays pending (rate_limited, nothing written), never unknown', { timeout: 120_000 }, async () => {
      const [locked, refused] = ids as [string, string]
      const agent = fx.as('agent')
      const { selection } = await selectProposeApprove(agent, [fx.as('reviewer'), fx.as('reviewer2')], 'subscriptions', { filter: { id: { in: [locked, refused] } } }, HOLD)
      assert.equal(selection.count, 2)
      const commit = await agent('POST', '/v1/resources/subscriptions/bulk-actions', { selection_id: selection.selection_id, expected_digest: selection.digest, action: HOLD }, { 'idempotency-key': 'lock-halt' })
      assert.equal(commit.status, 202, JSON.stringify(commit.body))
      const operation = await waitForOperation(agent, commit.body.operation_id, 90_000)
      const results = await allResults(agent, operation.operation_id)
      const of = (id: string) => results.find((r) => r.id === id)
      assert.equal(operation.state, 'halted', JSON.stringify({ operation, results }))
      // MariaDB: the other target, written while the lock is waited for, is refused and halts the operation; PostgreSQL
      // (lock_timeout 300 ms): every write pauses behind the refusal's retries until max_rate_limit_retries halts it
      const halt = dialect === 'mysql' ? ['failed', 'rejected', 'validation_failures'] : ['pending', null, 'rate_limit_retries']
      assert.deepEqual([of(refused).outcome, of(refused).reason, operation.halt_reason?.rule], halt, JSON.stringify({ refused: of(refused), halt: operation.halt_reason }))
      assert.deepEqual([of(locked).outcome, of(locked).reason], ['pending', 'rate_limited'], JSON.stringify(of(locked)))
      assert.ok(of(locked).rate_limit_hits >= 1, JSON.stringify(of(locked)))
      assert.match(of(locked).error ?? '', dialect === 'mysql' ? /(Lock wait timeout|max_statement_time).*nothing was written, retried/ : /lock timeout.*nothing was written, retried/, JSON.stringify(of(locked)))
      assert.deepEqual([operation.counts.unknown, operation.counts.pending, operation.counts.failed], dialect === 'mysql' ? [0, 1, 1] : [0, 2, 0])
      await holder.run('rollback')
      const rows = await holder.run(`select id, version from subscriptions where id in ('${locked}', '${refused}') order by id`)
      assert.deepEqual(
        rows.map((r) => [String(r.id), Number(r.version)]),
        [locked, refused].sort().map((id) => [id, versions.get(id)]),
        'nothing was written',
      )
    })
  })
}
