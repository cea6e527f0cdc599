import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import type { Page } from 'playwright-core'
import type { GatewayFixture } from '../support/gateway-fixture.js'
import { STORE_KINDS } from '../support/stores.js'
import { PAUSE, demoGatewayWithBrowser, newContext, proposePlan, signIn } from './support.js'

/**
 * "Retry the inventory" on a plan's review page is one retry per incomplete selection and reviewer: sent again
 * (back and click again, a second tab, two clicks at once) it hands back the first retry's plan, never a second
 * pending plan of the same action over the same records that a second reviewer could approve and commit too.
 */
for (const kind of STORE_KINDS) {
  describe(`review pages: a retried inventory is one new plan, however often the form is sent (${kind} store)`, () => {
    const env = demoGatewayWithBrowser({ store: kind, count: 2000 })

    /** An incomplete selection (one page of the walk) with the pause proposed on it by the agent. */
    const incompletePlan = async (fx: GatewayFixture, region: string) => {
      const made = await fx.as('agent')('POST', '/v1/resources/subscriptions/selections', { filter: { status: 'past_due', region }, page_size: 20, budget: { max_pages: 1 } })
      assert.equal(made.status, 201, JSON.stringify(made.body))
      assert.equal(made.body.complete, false)
      return { selection: made.body.selection_id as string, plan: (await proposePlan(fx, made.body.selection_id, PAUSE)).plan_id as string }
    }
    /** The selections made by retrying `of` (every other selection of its selector: each test has its own region), and the plans on them. */
    const retriesOf = async (fx: GatewayFixture, of: string) => {
      const db = fx.gateway.store.db
      const source = await db.selectFrom('selections').select('selector').where('id', '=', of).executeTakeFirstOrThrow()
      const selections = (await db.selectFrom('selections').select('id').where('selector', '=', source.selector).where('id', '!=', of).execute()).map((s) => s.id)
      const plans = selections.length === 0 ? [] : (await db.selectFrom('plans').select('id').where('selection_id', 'in', selections).execute()).map((p) => p.id)
      return { selections, plans }
    }
    const retry = async (page: Page) => {
      await Promise.all([page.waitForURL(/\/review\/plans\/plan_[0-9a-f]+\?proposed=1/), page.getByRole('button', { name: 'Retry the inventory' }).click()])
      return new URL(page.url()).pathname
    }

    test('retried, then back and retried again (another deadline): the first retry\'s plan, and the page says no second plan was made', async () => {
      const { fx, browser } = env
      const { selection, plan } = await incompletePlan(fx, 'eu')
      const page = await (await newContext(browser)).newPage()
      assert.equal(await signIn(page, fx, 'reviewer', `/review/plans/${plan}`), 200)
      const first = await retry(page)
      assert.notEqual(first, `/review/plans/${plan}`)
      assert.match(await page.locator('.notice').first().innerText(), /You proposed this plan/)

      await page.goBack()
      assert.equal(new URL(page.url()).pathname, `/review/plans/${plan}`)
      await page.getByLabel('Deadline').selectOption('1800')
      assert.equal(await retry(page), first, 'the repeat lands on the first retry\'s plan')
      assert.match(await page.locator('.notice').first().innerText(), /You had already retried this inventory; this is the plan made then, and no second plan was made/)

      const made = await retriesOf(fx, selection)
      assert.equal(made.selections.length, 1, `one retry selection: ${made.selections.join(', ')}`)
      assert.deepEqual(made.plans, [first.split('/').at(-1)], 'one plan proposed on it')
      await page.context().close()
    })

    test('two tabs of one reviewer send the form together: both land on one plan, one selection is kept', async () => {
      const { fx, browser } = env
      const { selection, plan } = await incompletePlan(fx, 'us')
      const context = await newContext(browser)
      const one = await context.newPage()
      assert.equal(await signIn(one, fx, 'reviewer', `/review/plans/${plan}`), 200)
      const two = await context.newPage()
      await two.goto(`${fx.base}/review/plans/${plan}`)
      const [a, b] = await Promise.all([retry(one), retry(two)])
      assert.equal(a, b, 'both tabs show the same plan')
      const made = await retriesOf(fx, selection)
      assert.equal(made.selections.length, 1, `one retry selection, the other walk discarded: ${made.selections.join(', ')}`)
      assert.deepEqual(made.plans, [a.split('/').at(-1)])
      await context.close()
    })

    test('ten retries posted at once by one session: one plan', async () => {
      const { fx, browser } = env
      const { selection, plan } = await incompletePlan(fx, 'apac')
      const page = await (await newContext(browser)).newPage()
      assert.equal(await signIn(page, fx, 'reviewer', `/review/plans/${plan}`), 200)
      const csrf = await page.locator('input[name="csrf"]').first().inputValue()
      const answers = await Promise.all(
        Array.from({ length: 10 }, () =>
          page.request.post(`${fx.base}/review/selections/${selection}/retry`, { form: { csrf, plan_id: plan, deadline_seconds: '600' }, maxRedirects: 0 }),
        ),
      )
      for (const a of answers) assert.equal(a.status(), 303, await a.text())
      const locations = new Set(answers.map((a) => new URL(a.headers().location!, fx.base).pathname))
      assert.equal(locations.size, 1, [...locations].join(', '))
      const made = await retriesOf(fx, selection)
      assert.equal(made.selections.length, 1, `one retry selection: ${made.selections.join(', ')}`)
      assert.deepEqual(made.plans, [[...locations][0]!.split('/').at(-1)])
      await page.context().close()
    })
    test('from the selection page (no plan): retry and restrict, each sent twice, land on the first answer, and say so rather than "A new selection was created"', async () => {
      const { fx, browser } = env
      const made = await fx.as('agent')('POST', '/v1/resources/subscriptions/selections', { filter: { status: 'paused' }, page_size: 20, budget: { max_pages: 1 } })
      assert.equal(made.body.complete, false)
      const of = made.body.selection_id as string
      const page = await (await newContext(browser)).newPage()
      assert.equal(await signIn(page, fx, 'reviewer', `/review/selections/${of}`), 200)
      for (const [button, again] of [['Retry the inventory', /You had already retried this inventory; this is that selection, and no second one was made/], ['Restrict to the returned ids', /You had already restricted this inventory to the records it returned; this is that selection, and no second one was made/]] as const) {
        await Promise.all([page.waitForURL(/created=1/), page.getByRole('button', { name: button }).click()])
        const first = new URL(page.url()).pathname
        assert.match(await page.locator('.notice').first().innerText(), /A new selection was created/)
        await page.goBack()
        await Promise.all([page.waitForURL(/again=/), page.getByRole('button', { name: button }).click()])
        assert.equal(new URL(page.url()).pathname, first, `${button}: the first answer`)
        assert.match(await page.locator('.notice').first().innerText(), again)
        await page.goto(`${fx.base}/review/selections/${of}`)
      }
      await page.context().close()
    })
  })
}
