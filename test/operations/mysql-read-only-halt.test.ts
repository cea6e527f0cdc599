import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { ensureDemoData } from '../../src/demo/index.js'
import { startDemoGateway, type GatewayFixture } from '../support/gateway-fixture.js'
import { createTestMysqlDatabase, type TestDatabase } from '../support/stores.js'
import { startSessionInitProxy, type SessionInitProxy } from '../connectors/sql/support/session-init-proxy.js'
import { allResults, selectProposeApprove, waitForOperation } from './support/flow.js'
import { openUpstream } from './support/upstream-connection.js'

const HOLD = { type: 'hold' }

/**
 * A bulk change on MariaDB whose sessions are read-only (1792; set per connection by a loopback proxy, never the
 * shared server's global read_only): the first write refused halts the operation as a refused credential does,
 * the rest stay pending, nothing is written (was: each target failed rolled_back, one after another).
 */
describe('mysql: an operation on a read-only session halts at its first write', () => {
  let upstream: TestDatabase
  let proxy: SessionInitProxy
  let fx: GatewayFixture
  before(async () => {
    upstream = await createTestMysqlDatabase()
    await ensureDemoData({ url: upstream.url, count: 30 })
    const url = new URL(upstream.url)
    proxy = await startSessionInitProxy({ host: url.hostname, port: Number(url.port) }, 'SET SESSION TRANSACTION READ ONLY')
    url.port = String(proxy.port)
    fx = await startDemoGateway({
      store: 'sqlite',
      count: 1,
      edit: (raw) => {
        raw.resources.subscriptions.connector.url = url.toString()
        raw.resources.subscriptions.actions.hold = { description: 'Tag on hold', set: { tags: ['on-hold'] }, precondition: { status: 'past_due' } }
        raw.execution = { concurrency: 1 }
      },
    })
  })
  after(async () => {
    await fx?.close()
    await proxy?.close()
    await upstream?.drop()
  })

  test('halted (unauthorized), one target failed naming 1792, the rest pending, no row changed', { timeout: 120_000 }, async () => {
    const agent = fx.as('agent')
    const { selection } = await selectProposeApprove(agent, [fx.as('reviewer'), fx.as('reviewer2')], 'subscriptions', { filter: { status: 'past_due' } }, HOLD)
    assert.ok(selection.count >= 2, JSON.stringify(selection))
    const commit = await agent('POST', '/v1/resources/subscriptions/bulk-actions', { selection_id: selection.selection_id, expected_digest: selection.digest, action: HOLD }, { 'idempotency-key': 'read-only' })
    assert.equal(commit.status, 202, JSON.stringify(commit.body))
    const operation = await waitForOperation(agent, commit.body.operation_id, 90_000)
    assert.equal(operation.state, 'halted', JSON.stringify(operation))
    const results = await allResults(agent, operation.operation_id)
    const failed = results.filter((r) => r.outcome === 'failed')
    assert.equal(failed.length, 1, JSON.stringify(results))
    assert.match(failed[0].error ?? '', /1792.*nothing was written/s, JSON.stringify(failed[0]))
    assert.equal(results.filter((r) => r.outcome === 'pending').length, results.length - 1, JSON.stringify(results))
    const admin = await openUpstream('mysql', upstream.url)
    try {
      const [row] = await admin.run(`select count(*) as n from subscriptions where tags like '%on-hold%'`)
      assert.equal(Number(row.n), 0, 'nothing was written')
    } finally {
      await admin.close()
    }
  })
})
