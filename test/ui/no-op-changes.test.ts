import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import type { Browser } from 'playwright-core'
import { type GatewayFixture, startDemoGateway } from '../support/gateway-fixture.js'
import { createSelection, launchBrowser, newContext, proposePlan, signIn } from './support.js'

/**
 * A change every record already holds used to read as a change: the glance and the summary said
 * `pause_reason → ""` for records whose pause_reason was already "", and only the per-record manifest said
 * "(already)". The plan now counts the targets its write actually changes (`changes.changing`), and the page
 * says how many of them change, and which set values every record already holds.
 */
describe('review page and plan view: a change that changes nothing says so', () => {
  let fx: GatewayFixture
  let browser: Browser
  let selectionId: string
  let total: number
  before(async () => {
    fx = await startDemoGateway({
      store: 'sqlite',
      count: 300,
      edit: (raw) => {
        raw.resources.subscriptions.actions.note_reason = { description: 'set the pause reason', params: { reason: { type: 'string', required: false } }, set: { pause_reason: '{{params.reason}}' } }
      },
    })
    browser = await launchBrowser()
    // every demo record's pause_reason is ""
    const selection = await createSelection(fx, { filter: { status: 'past_due', region: 'us' } })
    assert.equal(selection.complete, true)
    selectionId = selection.selection_id
    total = selection.count
    assert.ok(total > 1)
  })
  after(async () => {
    await browser?.close()
    await fx?.close()
  })

  test('every record already holds the value: the view says 0 change, and the glance and summary say no record changes', async () => {
    const plan = await proposePlan(fx, selectionId, { type: 'note_reason', params: { reason: '' } })
    const view = await fx.as('reviewer')('GET', `/v1/plans/${plan.plan_id}`)
    assert.equal(view.status, 200)
    assert.equal(view.body.changes.changing, 0, JSON.stringify(view.body.changes))
    const page = await (await newContext(browser)).newPage()
    await signIn(page, fx, 'reviewer', `/review/plans/${plan.plan_id}`)
    const glance = await page.getByTestId('glance').innerText()
    assert.match(glance, new RegExp(`no record changes: all ${total} already hold`), glance)
    const summary = await page.getByTestId('uniform-summary').innerText()
    assert.match(summary, new RegExp(`None of the ${total} records changes: every one already holds`), summary)
    assert.doesNotMatch(summary, /gets the same change/)
    await page.context().close()
    // an agent reading the plan over MCP is told too
    const client = new Client({ name: 'no-op', version: '1' })
    await client.connect(new StreamableHTTPClientTransport(new URL(`${fx.base}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${fx.tokens.agent}` } } }))
    try {
      const answer: any = await client.callTool({ name: 'get_plan', arguments: { plan_id: plan.plan_id } })
      assert.equal(answer.structuredContent.changes.changing, 0)
      assert.match(answer.content[0].text, new RegExp(`NO TARGET CHANGES: all ${total} already hold every value it sets`))
    } finally {
      await client.close()
    }
  })

  test('one set value already held, another not: every record changes, and the glance says which value they already hold', async () => {
    const plan = await proposePlan(fx, selectionId, { type: 'pause_collection', params: { reason: '' } })
    const view = await fx.as('reviewer')('GET', `/v1/plans/${plan.plan_id}`)
    const active = view.body.changes.summary.find((s: any) => s.field === 'collection').before.find((b: any) => b.value === 'active')?.count ?? 0
    assert.equal(view.body.changes.changing, active, JSON.stringify(view.body.changes))
    const page = await (await newContext(browser)).newPage()
    await signIn(page, fx, 'reviewer', `/review/plans/${plan.plan_id}`)
    const glance = await page.getByTestId('glance').innerText()
    // the records failing the precondition are not written: "all N already hold it" counts the written ones
    const skipped = total - active
    assert.match(glance, new RegExp(`pause_reason → "" \\(the agent's words: empty text\\) \\(all ${active}${skipped > 0 ? ' written' : ''} already hold it\\)`), glance)
    assert.match(glance, new RegExp(`${active} of ${total} records change`), glance)
    await page.context().close()
  })

  // A record failing the precondition as frozen is skipped, not written: counted as changing, the glance read
  // "1,830 of 1,830 records change" where 129 already held `collection: paused` and would be skipped.
  test('a set value that differs on records failing the precondition: they are not counted as changing, and every surface says they would be skipped', async () => {
    const plan = await proposePlan(fx, selectionId, { type: 'pause_collection', params: { reason: 'dunning review' } })
    const view = await fx.as('reviewer')('GET', `/v1/plans/${plan.plan_id}`)
    const before = view.body.changes.summary.find((s: any) => s.field === 'collection').before
    const active = before.find((b: any) => b.value === 'active')?.count ?? 0
    const failing = total - active
    assert.ok(active > 0 && failing > 0, JSON.stringify(before))
    assert.equal(view.body.precondition.failing_now, failing)
    assert.equal(view.body.changes.changing, active, JSON.stringify(view.body.changes))
    const page = await (await newContext(browser)).newPage()
    await signIn(page, fx, 'reviewer', `/review/plans/${plan.plan_id}`)
    const glance = await page.getByTestId('glance').innerText()
    assert.match(glance, new RegExp(`${active} of ${total} records change; ${failing} fails? the precondition as frozen and would be skipped`), glance)
    const summary = await page.getByTestId('uniform-summary').innerText()
    // the headline says how many are written, not "every one of the N records gets the same change"
    assert.match(summary, new RegExp(`^${active} of the ${total} records (is|are) written, each with the same change: .*\\. ${failing} records? would be skipped, not written: (it fails|they fail) the precondition as frozen\\.`), summary)
    assert.doesNotMatch(summary, /Every one of the/)
    await page.context().close()
    const client = new Client({ name: 'skipped', version: '1' })
    await client.connect(new StreamableHTTPClientTransport(new URL(`${fx.base}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${fx.tokens.agent}` } } }))
    try {
      const answer: any = await client.callTool({ name: 'get_plan', arguments: { plan_id: plan.plan_id } })
      assert.match(answer.content[0].text, new RegExp(`${active} of ${total} targets change; ${failing} fails? the precondition as frozen and would be skipped\\.`))
      assert.doesNotMatch(answer.content[0].text, /the others already hold/)
    } finally {
      await client.close()
    }
  })
})
