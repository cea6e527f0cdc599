import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { createSelection, demoGatewayWithBrowser, newContext, proposePlan, signIn } from './support.js'

describe("a reviewer's comment is recorded as typed, or refused with nothing recorded", () => {
  const env = demoGatewayWithBrowser({ store: 'sqlite', count: 1000 })

  const freshPlan = async (region: string) => proposePlan(env.fx, (await createSelection(env.fx, { filter: { status: 'past_due', region } })).selection_id)
  const approvalsOf = async (planId: string) => (await env.fx.as('agent')('GET', `/v1/plans/${planId}`)).body.approvals as { decision: string; comment: string | null }[]

  test('a comment the textarea takes whole (its line breaks count one each) is recorded whole, with its line breaks as typed', async () => {
    const { fx, browser } = env
    const plan = await freshPlan('eu')
    // 3,990 characters the textarea counts, 20 of them line breaks: the form sends each as CR LF, 4,010 in all.
    const lines = Array.from({ length: 21 }, (_, i) => `${String(i).padStart(2, '0')} ${'x'.repeat(180)}`)
    const comment = `${lines.join('\n')}${'y'.repeat(3990 - lines.join('\n').length - 4)} END`
    assert.equal(comment.length, 3990)

    const page = await (await newContext(browser)).newPage()
    await signIn(page, fx, 'reviewer', `/review/plans/${plan.plan_id}`)
    await page.getByLabel(/Comment/).fill(comment)
    assert.equal(await page.getByLabel(/Comment/).inputValue(), comment, 'the textarea (maxlength 4000) took the whole comment')
    await Promise.all([page.waitForURL(/decided=approve/), page.getByTestId('approve').click()])
    const [approval] = await approvalsOf(plan.plan_id)
    // Was: cut at 4,000 of the 4,010 sent, silently: the comment lost its last words ("END"), CR LF kept.
    assert.equal(approval?.comment, comment)
    await page.context().close()
  })

  test('a comment over 4,000 characters is refused naming the limit, and no decision is recorded', async () => {
    const { fx, browser } = env
    const plan = await freshPlan('apac')
    const page = await (await newContext(browser)).newPage()
    await signIn(page, fx, 'reviewer', `/review/plans/${plan.plan_id}`)
    const csrf = await page.locator('input[name="csrf"]').first().inputValue()
    const posted = await page.request.post(`${fx.base}/review/plans/${plan.plan_id}/decision`, {
      form: { csrf, plan_digest: plan.plan_digest, decision: 'approve', comment: `${'z'.repeat(4000)} and the reason it is safe` },
      headers: { origin: fx.base },
      maxRedirects: 0,
    })
    // Was: 303 to "Your approval is recorded", the comment cut at 4,000 with no word of it.
    assert.equal(posted.status(), 400)
    const text = await posted.text()
    assert.match(text, /was refused; nothing was recorded/)
    assert.match(text, /comment/)
    assert.match(text, /4000|4,000/)
    assert.deepEqual(await approvalsOf(plan.plan_id), [])
    await page.context().close()
  })
})
