import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { ensureDemoData } from '../../src/demo/index.js'
import { startDemoGateway, type GatewayFixture } from '../support/gateway-fixture.js'
import { createTestMysqlDatabase, createTestPostgresDatabase, type TestDatabase } from '../support/stores.js'
import { allResults, selectProposeApprove, waitForOperation } from './support/flow.js'
import { openUpstream } from './support/upstream-connection.js'

const HOLD = { type: 'hold' }
/** The configured limit: the refusal must come within a few of it, far short of the 30 s default. */
const LIMIT_MS = 1_000

/**
 * `connector.statement_timeout_ms` is the time limit the sql connector's statements run under, a row lock waited
 * for included (PostgreSQL statement_timeout; MariaDB innodb_lock_wait_timeout and max_statement_time). It was fixed
 * at 30 s: a write behind another session's row lock held its target, and the operation, that long. Configured at
 * 1 s, the write behind a held lock comes back refused within about that: on MariaDB pending (lock wait timeout,
 * retried, nothing written), on PostgreSQL failed rolled_back (57014, nothing written), as each did after 30 s.
 */
for (const dialect of ['mysql', 'postgres'] as const) {
  describe(`${dialect}: a configured statement_timeout_ms bounds a write's wait for a held row lock`, () => {
    let upstream: TestDatabase
    let holder: Awaited<ReturnType<typeof openUpstream>>
    let fx: GatewayFixture
    let locked = ''
    let version = 0
    before(async () => {
      upstream = dialect === 'postgres' ? await createTestPostgresDatabase() : await createTestMysqlDatabase()
      await ensureDemoData({ url: upstream.url, count: 30 })
      holder = await openUpstream(dialect, upstream.url)
      const [row] = await holder.run(`select id, version from subscriptions where status = 'past_due' order by id`)
      locked = String(row.id)
      version = Number(row.version)
      fx = await startDemoGateway({
        store: 'sqlite',
        count: 1,
        edit: (raw) => {
          raw.resources.subscriptions.connector.url = upstream.url
          raw.resources.subscriptions.connector.statement_timeout_ms = LIMIT_MS
          raw.resources.subscriptions.actions.hold = { description: 'Tag on hold', set: { tags: ['on-hold'] }, precondition: { status: 'past_due' } }
        },
      })
    })
    after(async () => {
      await holder?.run('rollback').catch(() => undefined)
      await holder?.close()
      await fx?.close()
      await upstream?.drop()
    })

    test('the write is refused within about the configured limit, nothing written', { timeout: 120_000 }, async () => {
      const agent = fx.as('agent')
      const { selection } = await selectProposeApprove(agent, [fx.as('reviewer'), fx.as('reviewer2')], 'subscriptions', { filter: { id: { in: [locked] } } }, HOLD)
      assert.equal(selection.count, 1)
      await holder.run(dialect === 'postgres' ? 'begin' : 'start transaction')
      await holder.run(`select id from subscriptions where id = '${locked}' for update`)
      const started = Date.now()
      const commit = await agent('POST', '/v1/resources/subscriptions/bulk-actions', { selection_id: selection.selection_id, expected_digest: selection.digest, action: HOLD }, { 'idempotency-key': 'lock-limit' })
      assert.equal(commit.status, 202, JSON.stringify(commit.body))
      const operationId = commit.body.operation_id
      // the first refusal: MariaDB counts a rate-limit hit and retries, PostgreSQL fails the target rolled back
      let seen: any
      for (;;) {
        const [result] = await allResults(agent, operationId)
        if (result && (result.rate_limit_hits >= 1 || result.outcome === 'failed')) {
          seen = result
          break
        }
        assert.ok(Date.now() - started < 20_000, `no refusal within 20 s (configured ${LIMIT_MS} ms): ${JSON.stringify(result)}`)
        await new Promise((r) => setTimeout(r, 50))
      }
      const elapsed = Date.now() - started
      assert.ok(elapsed < LIMIT_MS + 6_000, `refused after ${elapsed} ms, configured ${LIMIT_MS} ms`)
      if (dialect === 'mysql') {
        assert.deepEqual([seen.outcome, seen.reason], ['pending', 'rate_limited'], JSON.stringify(seen))
        assert.match(seen.error ?? '', /(Lock wait timeout|max_statement_time).*nothing was written, retried/, JSON.stringify(seen))
      } else {
        assert.deepEqual([seen.outcome, seen.reason], ['failed', 'rolled_back'], JSON.stringify(seen))
        assert.match(seen.error ?? '', /57014.*nothing was written/, JSON.stringify(seen))
      }
      const [held] = await holder.run(`select version from subscriptions where id = '${locked}'`)
      assert.equal(Number(held.version), version, 'nothing was written')
      // the lock released, MariaDB's retry goes through; PostgreSQL's failed target stays as it was
      await holder.run('rollback')
      const operation = await waitForOperation(agent, operationId, 60_000)
      const [last] = await allResults(agent, operationId)
      assert.equal(last.outcome, dialect === 'mysql' ? 'succeeded' : 'failed', JSON.stringify({ operation, last }))
    })
  })
}
