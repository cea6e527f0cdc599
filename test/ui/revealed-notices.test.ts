import assert from 'node:assert/strict'
import Database from 'better-sqlite3'
import { after, before, describe, test } from 'node:test'
import type { Browser } from 'playwright-core'
import { MissingSection } from '../../src/ui/missing-evidence.js'
import { type GatewayFixture, startDemoGateway } from '../support/gateway-fixture.js'
import { createSelection, launchBrowser, newContext, proposePlan, signIn, startReceiver } from './support.js'

/** Characters a reader cannot see, or that reorder what they see: never on a page as themselves. */
const HIDDEN = /[\u200B-\u200F\u202A-\u202E\u2060-\u2064\u2066-\u2069\uFEFF\u00AD]/

async function until(check: () => Promise<boolean>, what: string, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!(await check())) {
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 25))
  }
}

describe('notifications and missing evidence: every text is revealed, like every other value on the pages', () => {
  let fx: GatewayFixture
  let browser: Browser
  let bad: Awaited<ReturnType<typeof startReceiver>>
  before(async () => {
    bad = await startReceiver(() => 500)
    fx = await startDemoGateway({
      store: 'sqlite',
      count: 200,
      edit: (raw) => {
        // "ops<RLO>exe.txt" reads "opstxt.exe": the label names which webhook failed
        raw.notifications = { webhooks: [{ name: 'ops\u202Eexe.txt', url: `${bad.url}/hook`, format: 'slack' }], retry: { max_attempts: 1, initial_backoff_ms: 10, max_backoff_ms: 20 } }
      },
    })
    browser = await launchBrowser()
  })
  after(async () => {
    await browser?.close()
    await fx?.close()
    await bad?.close()
  })

  test("a failed webhook's label and last error are revealed on the plan page", async () => {
    const plan = await proposePlan(fx, (await createSelection(fx, { filter: { status: 'past_due', region: 'us' } })).selection_id, { type: 'pause_collection', params: { reason: 'r' } })
    await until(async () => (await fx.gateway.notifications.deliveries({ plan_id: plan.plan_id })).some((d) => d.state === 'failed'), 'the failed delivery')
    // and its attempt's audit row written: the gateway is not writing when this test writes behind its back
    await fx.gateway.notifications.flush()
    // A last error kept in the store: the receiver's side decides part of what such a text says.
    const db = new Database(fx.storeUrl.replace(/^sqlite:/, ''))
    try {
      db.prepare('update webhook_deliveries set last_error = ? where plan_id = ?').run('the receiver answered \u202Ekaerb\u202C HTTP 500', plan.plan_id)
    } finally {
      db.close()
    }
    const page = await (await newContext(browser)).newPage()
    await signIn(page, fx, 'reviewer', `/review/plans/${plan.plan_id}`)
    const table = page.getByTestId('deliveries')
    assert.doesNotMatch(await table.innerHTML(), HIDDEN)
    const text = await table.innerText()
    assert.match(text, /ops\[U\+202E\]exe\.txt/)
    assert.match(text, /answered \[U\+202E\]kaerb\[U\+202C\] HTTP 500/)
    await page.context().close()
  })

  test("the missing-evidence section reveals a continuation's message, a warning's field reasons and a limit's name", async () => {
    const selection = await createSelection(fx, { filter: { status: 'past_due', region: 'us' } })
    // The view of a real selection, with the texts an upstream walk reports put in: they reach the page as given.
    const view = {
      ...selection,
      complete: false,
      incomplete_reasons: [{ code: 'MORE_PAGES_AVAILABLE', message: 'stopped', limit: { name: 'max\u202Esegap', value: 1 } }],
      continuation: { kind: 'narrow_query', message: 'narrow "src\u202Eexe.txt"' },
      warnings: [{ code: 'PARTIAL_FIELD_SET', message: 'some fields', fields: [{ field: 'notes', reason: 'denied \u200Bby policy' }] }],
    }
    const viewer = { actor: { principal: 'reviewer', roles: ['reviewer'] }, csrf: 'x' } as never
    const html = String(await MissingSection({ selection: view, viewer }).toString())
    assert.doesNotMatch(html, HIDDEN)
    assert.match(html, /max\[U\+202E\]segap/)
    assert.match(html, /src\[U\+202E\]exe\.txt/)
    assert.match(html, /denied \[U\+200B\]by policy/)
  })
})
