import assert from 'node:assert/strict'
import { readFile } from 'node:fs/promises'
import { after, describe, test } from 'node:test'
import { ARTICLE_SELECTION, PAUSE, createSelection, csvRows, demoGatewayWithBrowser, newContext, proposePlan, screenshot, signIn, waitForOperation } from './support.js'

describe('review pages: a reviewer approves the article scenario in a real browser', () => {
  const env = demoGatewayWithBrowser({ store: 'sqlite', count: 3000 })

  test('select and propose over HTTP; sign in, read the five answers, export the CSV, approve; commit over HTTP; the operation page shows the outcomes', async () => {
    const { fx, browser } = env
    const selection = await createSelection(fx, ARTICLE_SELECTION)
    assert.equal(selection.complete, true)
    assert.ok(selection.exclusions.every((e: any) => e.count > 0), 'the demo data has disputed and legal_hold records among past_due eu')
    const plan = await proposePlan(fx, selection.selection_id, PAUSE)
    assert.equal(plan.state, 'pending')

    const context = await newContext(browser, 1280)
    const page = await context.newPage()
    // Unauthenticated: the plan page sends the reviewer to sign in, then back to the plan.
    await page.goto(`${fx.base}/review/plans/${plan.plan_id}`)
    assert.match(page.url(), /\/review\/sign-in\?next=/)
    await page.getByLabel('Reviewer token').fill(fx.tokens.reviewer)
    await Promise.all([page.waitForURL(`**/review/plans/${plan.plan_id}`), page.getByRole('button', { name: 'Sign in' }).click()])

    // The session cookie: HttpOnly, SameSite=Strict, scoped to /review.
    const cookie = (await context.cookies()).find((c) => c.name === 'warrant_review')
    assert.ok(cookie)
    assert.equal(cookie.httpOnly, true)
    assert.equal(cookie.sameSite, 'Strict')
    assert.equal(cookie.path, '/review')

    // The queue lists it.
    await page.goto(`${fx.base}/review`)
    const row = page.locator(`[data-plan-id="${plan.plan_id}"]`)
    await row.waitFor()
    await screenshot(page, 'queue-1280')
    const rowText = await row.innerText()
    assert.match(rowText, /billing-demo \(acct 4411/)
    assert.match(rowText, /pause_collection/)
    assert.match(rowText, new RegExp(selection.count.toLocaleString('en-US')))
    assert.match(rowText, /test-agent/)
    assert.match(rowText, /min/)
    await Promise.all([page.waitForURL(`**/review/plans/${plan.plan_id}`), row.getByRole('link', { name: /pause_collection on/ }).click()])

    // 1. The environment is the first, loudest thing.
    assert.equal(await page.getByTestId('environment').innerText(), 'billing-demo (acct 4411, host demo.sqlite (local))')
    assert.match(await page.getByTestId('completeness').innerText(), /Complete/)
    // 2. The selector in words, each exclusion rule with its count.
    const clauses = await page.getByTestId('filter-clauses').innerText()
    assert.match(clauses, /region is eu/)
    assert.match(clauses, /status is past_due/)
    const exclusions = await page.getByTestId('exclusions').innerText()
    assert.match(exclusions, /tags contain disputed/)
    assert.match(exclusions, /tags contain legal_hold/)
    for (const e of selection.exclusions) assert.equal(await page.getByTestId(`excluded-count-${e.rule}`).innerText(), e.count.toLocaleString('en-US'))
    // 3. The manifest: the total, the first page, groups.
    assert.match(await page.getByTestId('manifest-count').innerText(), new RegExp(`${selection.count.toLocaleString('en-US')} records`))
    assert.match(await page.getByTestId('page-range').innerText(), new RegExp(`Records 1–50 of ${selection.count.toLocaleString('en-US')}`))
    assert.equal(await page.getByTestId('manifest').locator('tbody tr').count(), 50)
    await page.getByTestId('group-tenant').waitFor()
    // 4. Before → after for every changed field, one summary line, the precondition, reversibility.
    const uniform = await page.getByTestId('uniform-summary').innerText()
    assert.match(uniform, /collection → paused/)
    assert.match(uniform, /pause_reason → "approved credit hold review" \(the agent's words\)/)
    const effect = await page.getByTestId('effect').innerText()
    assert.match(effect, /collection/)
    assert.match(effect, /active \(\d+\)/)
    // each row: an arrow where the record is written, "would be skipped" where it fails the precondition as frozen
    // (the selection is not filtered on collection: a paused one is skipped, never shown as "paused → paused")
    const rows = await page.getByTestId('manifest').locator('tbody tr').allInnerTexts()
    assert.ok(rows.some((r) => /collection: active\s*→\s*paused/.test(r)), rows.join('\n'))
    for (const r of rows) assert.match(r, /collection: active\s*→\s*paused|would be skipped \(fails the precondition as frozen\): not written/, r)
    assert.match(await page.getByTestId('precondition').innerText(), /status is past_due and collection is active|collection is active and status is past_due/)
    assert.match(await page.getByTestId('reversible').innerText(), /^Yes/)
    // 5. Nothing missing.
    await page.getByTestId('nothing-missing').waitFor()

    // The next page of the manifest is read by cursor.
    await Promise.all([page.waitForURL(/m=/), page.getByTestId('next-page').first().click()])
    assert.match(await page.getByTestId('page-range').innerText(), /Records 51–100 of/)

    // The excluded records, listed.
    await page.goto(`${fx.base}/review/selections/${selection.selection_id}/excluded?rule=disputed`)
    assert.match(await page.getByTestId('excluded-total').innerText(), new RegExp(`${selection.exclusions[0].count} record`))

    // The CSV export: every member, one row each.
    await page.goto(`${fx.base}/review/plans/${plan.plan_id}`)
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByTestId('export-csv').click()])
    const csv = csvRows(await readFile((await download.path())!, 'utf8')).filter((r) => r.length > 1 || r[0] !== '')
    assert.equal(csv.length - 1, selection.count, 'a header row, then one row per member')
    // each row says whether the selection is whole and its state, then the member's id; its digest closes the row
    assert.deepEqual(csv[0]!.slice(0, 3), ['selection_complete', 'selection_state', 'id'])
    assert.ok(csv.slice(1).every((r) => r[0] === 'true' && r[1] === 'frozen' && r[r.length - 1] === selection.digest), 'every row names the complete selection it belongs to')

    await screenshot(page, 'plan-1280')
    const phone = await (await newContext(browser, 375)).newPage()
    await signIn(phone, fx, 'reviewer', `/review/plans/${plan.plan_id}`)
    assert.equal(await phone.getByTestId('environment').innerText(), 'billing-demo (acct 4411, host demo.sqlite (local))')
    const overflow = await phone.evaluate(() => document.documentElement.scrollWidth - window.innerWidth)
    assert.ok(overflow <= 1, `the page fits a phone's width; wide tables scroll inside their own region (overflow ${overflow}px)`)
    await screenshot(phone, 'plan-375')

    // Approve: the form carries the plan digest and the CSRF token.
    const form = page.getByTestId('decision-form')
    assert.equal(await form.locator('input[name="plan_digest"]').inputValue(), plan.plan_digest)
    assert.ok((await form.locator('input[name="csrf"]').inputValue()).length > 20)
    await page.getByLabel('Comment (optional, recorded with your decision)').fill('checked the manifest and both exclusions')
    await Promise.all([page.waitForURL(/decided=approve/), page.getByTestId('approve').click()])
    assert.match(await page.getByTestId('flash').innerText(), /Your approval is recorded/)
    assert.equal(await page.getByTestId('plan-state').innerText(), 'approved')
    assert.match(await page.getByTestId('approved-by').innerText(), /alice/)
    assert.equal(await page.getByTestId('approve').count(), 0)

    // The same approval the API sees, recorded on the audit trail as a UI decision.
    const viewed = await fx.as('agent')('GET', `/v1/plans/${plan.plan_id}`)
    assert.equal(viewed.body.state, 'approved')
    assert.equal(viewed.body.approval_state.approved_by[0].name, 'alice')
    const audit = await fx.as('reviewer')('GET', `/v1/audit?plan_id=${plan.plan_id}&level=run`)
    const decision = audit.body.events.find((e: any) => e.action === 'ui:approve')
    assert.ok(decision, JSON.stringify(audit.body.events.map((e: any) => e.action)))
    assert.equal(decision.surface, 'ui')
    assert.equal(decision.details.decision, 'approve')

    // The agent commits over HTTP.
    const commit = await fx.as('agent')('POST', `/v1/plans/${plan.plan_id}/commit`, { expected_digest: plan.plan_digest }, { 'idempotency-key': `ui-flow-${plan.plan_id}` })
    assert.equal(commit.status, 202, JSON.stringify(commit.body))
    const operation = await waitForOperation(fx, commit.body.operation_id)

    // The operation page shows the same outcomes as the API.
    await page.goto(`${fx.base}/review/operations/${operation.operation_id}`)
    assert.equal(await page.getByTestId('operation-state').innerText(), operation.state)
    for (const k of ['succeeded', 'failed', 'skipped', 'unknown'] as const)
      assert.equal(await page.getByTestId(`count-${k}`).innerText(), operation.counts[k].toLocaleString('en-US'), k)
    assert.equal(await page.getByTestId('count-pending').innerText(), String(operation.counts.pending + operation.counts.in_flight))
    assert.equal(operation.counts.succeeded + operation.counts.skipped, selection.count)
    assert.equal(await page.getByTestId('targets').locator('tbody tr').count(), Math.min(100, selection.count))
    if (operation.counts.skipped > 0) {
      await Promise.all([page.waitForURL(/outcome=skipped/), page.getByTestId('filter-skipped').click()])
      assert.equal(await page.getByTestId('targets').locator('tbody tr').count(), Math.min(100, operation.counts.skipped))
      assert.match(await page.getByTestId('targets').locator('tbody tr').first().innerText(), /skipped/)
    }
    await page.goto(`${fx.base}/review/operations/${operation.operation_id}`)
    await screenshot(page, 'operation-1280')
    await phone.goto(`${fx.base}/review/operations/${operation.operation_id}`)
    await screenshot(phone, 'operation-375')

    // The plan page lists the operation; the audit page has both levels.
    await page.goto(`${fx.base}/review/plans/${plan.plan_id}`)
    assert.equal(await page.getByTestId('plan-state').innerText(), 'committed')
    await page.getByRole('link', { name: operation.operation_id }).waitFor()
    await page.goto(`${fx.base}/review/plans/${plan.plan_id}/audit`)
    const run = await page.getByTestId('run-events').innerText()
    assert.match(run, /ui:approve/)
    assert.match(run, /POST \/v1\/plans\/:id\/commit/)
    assert.match(run, /operation\.finished/)
    assert.ok((await page.getByTestId('call-events').locator('tbody tr').count()) > 0, 'every upstream call of the operation is listed')
    await screenshot(page, 'audit-1280')

    // Propose compensation: a new plan, reviewed like any other; the proposer cannot approve it.
    await page.goto(`${fx.base}/review/operations/${operation.operation_id}`)
    await Promise.all([page.waitForURL(/proposed=1/), page.getByTestId('propose-compensation').click()])
    assert.match(await page.locator('h1').innerText(), /compensate/)
    // its parameters are Warrant's, drawn from the operation: labelled so, never as the agent's words
    const params = await page.getByTestId('action-params').innerText()
    assert.match(params, /operation_id[\s\S]*set by Warrant from the operation/)
    assert.doesNotMatch(params, /the agent's words/)
    assert.equal(await page.getByTestId('approve').count(), 0)
    assert.match(await page.getByTestId('cannot-approve').innerText(), /You proposed this plan/)
    await context.close()
  })

  test('an agent cannot sign in to the review pages (403)', async () => {
    const { fx, browser } = env
    const context = await newContext(browser)
    const page = await context.newPage()
    assert.equal(await signIn(page, fx, 'agent'), 403)
    assert.match(await page.getByTestId('sign-in-problem').innerText(), /agents never approve/)
    assert.equal((await context.cookies()).some((c) => c.name === 'warrant_review'), false)
    await page.goto(`${fx.base}/review`)
    assert.match(page.url(), /\/review\/sign-in/)
    await context.close()
  })
})
