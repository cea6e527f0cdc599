import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { createCliWorkspace } from '../support/cli-config.js'
import { demoGatewayFor } from '../support/gateway-fixture.js'
import { STORE_KINDS } from '../support/stores.js'
import { createSelection, demoGatewayWithBrowser, newContext, proposePlan, signIn } from '../ui/support.js'

/** A request refused 400 whose body names another plan, selection and operation: its row keeps those ids, the caller's claim. */
async function claimPlan(as: (method: string, path: string, body?: unknown) => Promise<{ status: number }>, planId: string): Promise<void> {
  const refused = await as('POST', '/v1/resources/subscriptions/selections', { filter: {}, operation_id: 'op_claimed', plan_id: planId, selection_id: 'sel_claimed' })
  assert.equal(refused.status, 400)
}

/**
 * `GET /v1/audit?plan_id=X` and the review page's audit trail of plan X listed a refused request's row under the ids
 * the request named: any agent's 400 naming plan X stood in plan X's history like one of its events. Listed rows now
 * say `refused_claim: true` where the request was refused (its ids are what it named, never a link), and the review
 * page marks such a row "refused claim".
 */
for (const kind of STORE_KINDS) {
  describe(`listing by id beside a refused request that named it (${kind})`, () => {
    const env = demoGatewayFor({ store: kind, count: 20 })

    test('GET /v1/audit?plan_id= marks the refused row as a refused claim, and only it', async () => {
      const { fx } = env
      await fx.gateway.audit.record({ actor: null, action: 'POST /v1/plans/:id/approvals', plan_id: 'plan_x', summary: { status: 201, outcome: 'ok' } })
      await claimPlan(fx.as('agent'), 'plan_x')
      await fx.gateway.audit.flush()
      const listed = await fx.as('reviewer')('GET', '/v1/audit?plan_id=plan_x')
      assert.equal(listed.status, 200, JSON.stringify(listed.body))
      const marks = (listed.body.events as { action: string; refused_claim: unknown }[]).map((e) => [e.action.replace(/[{:]resource}?/, 'R'), e.refused_claim])
      assert.deepEqual(marks, [
        ['POST /v1/plans/:id/approvals', false],
        ['POST /v1/resources/R/selections', true],
      ])
    })
  })
}

describe("the review page's audit trail beside a refused request that named its plan (sqlite)", () => {
  const env = demoGatewayWithBrowser({ store: 'sqlite', count: 200 })

  test('the refused row is marked a refused claim; the page says it is not verified', { timeout: 120_000 }, async () => {
    const { fx, browser } = env
    const plan = await proposePlan(fx, (await createSelection(fx)).selection_id)
    await claimPlan(fx.as('agent'), plan.plan_id)
    await fx.gateway.audit.flush()
    const page = await (await newContext(browser)).newPage()
    await signIn(page, fx, 'reviewer', `/review/plans/${plan.plan_id}/audit`)
    const marked = page.getByTestId('run-events').locator('tr', { hasText: /refused claim/ })
    assert.equal(await marked.count(), 1, 'the refused request alone is marked')
    assert.match(await marked.innerText(), /POST \/v1\/resources\/\S+\/selections/)
    assert.ok((await page.getByTestId('run-events').locator('tr', { hasText: /POST \/v1\/selections\/\S+\/plans/ }).count()) >= 1, 'the plan\'s own events are listed')
    assert.match(await page.getByTestId('unverified').innerText(), /not verified/)
    await page.context().close()
  })
})

describe('`warrant audit query --plan` beside a refused command that named the plan (real processes, sqlite)', () => {
  let ws: Awaited<ReturnType<typeof createCliWorkspace>>
  before(async () => {
    ws = await createCliWorkspace({ count: 3 })
  })
  after(() => ws?.drop())

  test('the refused row is marked in text and --json', { timeout: 120_000 }, async () => {
    const refused = await ws.warrant(['approve', 'plan_claimed', '--digest', `sha256:${'0'.repeat(64)}`])
    assert.notEqual(refused.code, 0, refused.stdout)
    const text = await ws.warrant(['audit', 'query', '--plan', 'plan_claimed'])
    assert.equal(text.code, 0, text.stderr)
    assert.match(text.stdout, /cli:approve {2}\[refused claim/)
    const json = await ws.warrant(['audit', 'query', '--plan', 'plan_claimed', '--json'])
    const events = (JSON.parse(json.stdout) as { events: { action: string; refused_claim: boolean }[] }).events
    assert.deepEqual(events.map((e) => [e.action, e.refused_claim]), [['cli:approve', true]])
  })
})
