import assert from 'node:assert/strict'
import { join } from 'node:path'
import { after, before, describe, test } from 'node:test'
import BetterSqlite3 from 'better-sqlite3'
import type { Browser } from 'playwright-core'
import { caller, selectProposeApprove, waitForOperation } from '../operations/support/flow.js'
import { type GatewayFixture, startDemoGateway } from '../support/gateway-fixture.js'
import { createTempDir, type TempDir } from '../support/stores.js'
import { launchBrowser, newContext, signIn } from './support.js'

/**
 * Ids are strings in Warrant's contract; an id field declared `integer` (a SQLite table keyed by INTEGER PRIMARY KEY)
 * holds them as their digits. The pages showed such ids as text, `"7" (text)`, where a selector names them (a
 * compensation's or follow-up's `id is one of …`) and where a record's values are listed: read as a string column
 * of digits, the opposite of what the table holds. Shown as the number they are, as any integer field's digits are.
 * Real Chromium, a real SQLite upstream.
 */
describe('integer ids are shown as the numbers they are', () => {
  let fx: GatewayFixture
  let dir: TempDir
  let browser: Browser
  before(async () => {
    dir = await createTempDir('warrant-int-ids-')
    const file = join(dir.path, 'ledger.db')
    const db = new BetterSqlite3(file)
    db.exec('create table ledger (id integer primary key, version integer not null, status text not null)')
    for (const id of [7, 8, 9]) db.exec(`insert into ledger values (${id}, 1, 'open')`)
    db.close()
    fx = await startDemoGateway({
      store: 'sqlite',
      count: 10,
      edit: (raw) => {
        raw.resources.ledger = {
          environment: raw.resources.subscriptions.environment,
          connector: { kind: 'sql', url: `sqlite:${file}`, table: 'ledger' },
          fields: { id: 'integer', version: 'integer', status: 'string' },
          id_field: 'id',
          version_field: 'version',
          review_fields: ['id', 'status'],
          actions: { close: { description: 'close', set: { status: 'closed' }, precondition: { status: 'open' }, reversible: true } },
        }
      },
    })
    browser = await launchBrowser()
  })
  after(async () => {
    await browser?.close()
    await fx?.close()
    await dir?.drop()
  })

  test('the compensation plan, its operation and the selection show 7, never "7" (text)', { timeout: 120_000 }, async () => {
    const token = (await fx.gateway.principals.issue({ name: 'ledger-agent', role: 'agent', scopes: { resources: ['ledger'], actions: '*' } })).token
    const agent = caller(fx.base, token)
    const reviewer = fx.as('reviewer')
    const action = { type: 'close' }
    const { selection } = await selectProposeApprove(agent, [reviewer, fx.as('reviewer2')], 'ledger', { filter: { status: 'open' } }, action)
    const commit = await agent('POST', '/v1/resources/ledger/bulk-actions', { selection_id: selection.selection_id, expected_digest: selection.digest, action }, { 'idempotency-key': 'int-ids' })
    assert.equal(commit.status, 202, JSON.stringify(commit.body))
    const op = await waitForOperation(agent, commit.body.operation_id)
    assert.equal(op.state, 'succeeded', JSON.stringify(op))
    const undo = await agent('POST', `/v1/operations/${op.operation_id}/compensation`)
    assert.equal(undo.status, 201, JSON.stringify(undo.body))

    const page = await (await newContext(browser)).newPage()
    await signIn(page, fx, 'reviewer')
    const pages = {
      compensation: `/review/plans/${encodeURIComponent(undo.body.plan_id)}`,
      operation: `/review/operations/${encodeURIComponent(op.operation_id)}`,
      plan: `/review/plans/${encodeURIComponent(op.plan_id)}`,
      selection: `/review/selections/${encodeURIComponent(selection.selection_id)}`,
    }
    for (const [name, path] of Object.entries(pages)) {
      const response = await page.goto(`${fx.base}${path}`)
      assert.equal(response?.status(), 200, `${name}: ${path}`)
      const text = await page.locator('main').innerText()
      assert.doesNotMatch(text, /"[789]" \(text\)/, `${name} shows an integer id as text:\n${text.slice(0, 3000)}`)
    }
    await page.goto(`${fx.base}${pages.compensation}`)
    assert.match(await page.getByTestId('glance').innerText(), /id is one of 7, 8, 9 \(3 values\)/)
  })
})
