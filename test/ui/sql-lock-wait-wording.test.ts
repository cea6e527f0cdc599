import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import type { Browser } from 'playwright-core'
import { ensureDemoData } from '../../src/demo/index.js'
import { startDemoGateway, type GatewayFixture } from '../support/gateway-fixture.js'
import { createTestPostgresDatabase, type TestDatabase } from '../support/stores.js'
import { selectProposeApprove, waitForOperation } from '../operations/support/flow.js'
import { openUpstream } from '../operations/support/upstream-connection.js'
import { launchBrowser, newContext, signIn } from './support.js'

const HOLD = { type: 'hold' }

/**
 * The operation page's rate-limit summary said "The upstream asked to wait (429, or 503 with Retry-After)" on a sql
 * resource too, whose waits were the database's: a write refused for a lock (PostgreSQL lock_timeout) is counted as a
 * rate-limit hit and retried after a pause, but no 429 or Retry-After ever came. Said in the database's terms there
 * (the page and the live status it polls); the HTTP wording stays for http resources (rate-limit-hits-shown.test.ts).
 * A real PostgreSQL upstream, a row held locked by another session, real Chromium.
 */
describe('postgres: an operation whose write waited on a lock says so in the database\'s terms', () => {
  let upstream: TestDatabase
  let holder: Awaited<ReturnType<typeof openUpstream>>
  let fx: GatewayFixture
  let browser: Browser
  let ids: string[] = []
  before(async () => {
    upstream = await createTestPostgresDatabase()
    await ensureDemoData({ url: upstream.url, count: 30 })
    const admin = await openUpstream('postgres', upstream.url)
    ids = (await admin.run(`select id from subscriptions where status = 'past_due' order by id`)).slice(0, 2).map((r) => String(r.id))
    await admin.run(`alter database ${new URL(upstream.url).pathname.slice(1)} set lock_timeout = '300ms'`)
    await admin.close()
    holder = await openUpstream('postgres', upstream.url)
    await holder.run('begin')
    await holder.run(`select id from subscriptions where id = '${ids[0]}' for update`)
    fx = await startDemoGateway({
      store: 'sqlite',
      count: 1,
      edit: (raw) => {
        raw.resources.subscriptions.connector.url = upstream.url
        raw.resources.subscriptions.actions.hold = { description: 'Tag on hold', set: { tags: ['on-hold'] }, precondition: { status: 'past_due' } }
        raw.resources.subscriptions.connector.write_window = 1
        raw.execution = { concurrency: 1 }
      },
    })
    browser = await launchBrowser()
  })
  after(async () => {
    await holder?.run('rollback').catch(() => undefined)
    await holder?.close()
    await browser?.close()
    await fx?.close()
    await upstream?.drop()
  })

  test('the summary names the lock and the pause, never a 429 or Retry-After', { timeout: 120_000 }, async () => {
    const agent = fx.as('agent')
    const { selection } = await selectProposeApprove(agent, [fx.as('reviewer'), fx.as('reviewer2')], 'subscriptions', { filter: { id: { in: ids } } }, HOLD)
    const commit = await agent('POST', '/v1/resources/subscriptions/bulk-actions', { selection_id: selection.selection_id, expected_digest: selection.digest, action: HOLD }, { 'idempotency-key': 'lock-wording' })
    assert.equal(commit.status, 202, JSON.stringify(commit.body))
    const id = commit.body.operation_id as string
    // the lock is held until a write has waited on it and been refused once; then the row is let go
    const deadline = Date.now() + 60_000
    for (;;) {
      const op = (await agent('GET', `/v1/operations/${id}`)).body
      if (op.rate_limit_hits >= 1) break
      assert.ok(Date.now() < deadline, `no lock wait was counted: ${JSON.stringify(op)}`)
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
    await holder.run('rollback')
    const op = await waitForOperation(agent, id, 60_000)
    assert.equal(op.state, 'succeeded', JSON.stringify(op))
    assert.ok(op.rate_limit_hits >= 1)

    const tab = await (await newContext(browser)).newPage()
    await signIn(tab, fx, 'reviewer', `/review/operations/${id}`)
    const summary = await tab.getByTestId('rate-limited').innerText()
    assert.match(summary, /the database held a lock past the time limit/i, summary)
    assert.match(summary, /retried after a pause/, summary)
    assert.doesNotMatch(summary, /429|Retry-After|upstream asked/, summary)
    // the live update the page polls says the same
    const status = await tab.evaluate(async (path) => (await fetch(path)).json(), `/review/operations/${id}/status`)
    assert.equal(status.rate_limited_text, summary.trim())
    await tab.context().close()
  })
})
