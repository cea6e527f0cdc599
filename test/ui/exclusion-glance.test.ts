import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { createSelection, demoGatewayWithBrowser, newContext, proposePlan, signIn } from './support.js'

/**
 * An exclusion rule's name is the agent's: nothing ties "legal_hold" to a filter on legal holds. The plan's glance
 * named the rules by name and count alone ("excluding legal_hold (12)"), so a rule named legal_hold that set aside
 * the enterprise accounts read as the legal holds kept out, while they stayed in the set and were written.
 */
describe('plan page: the glance says what each exclusion rule removes, beside the name the agent gave it', () => {
  const d = demoGatewayWithBrowser({ store: 'sqlite', count: 300 })

  test('a rule named legal_hold that removes enterprise accounts reads as removing enterprise accounts', async () => {
    const selection = await createSelection(d.fx, {
      filter: { status: 'past_due', region: 'eu' },
      exclude: [{ rule: 'legal_hold', filter: { tags: { contains: 'enterprise' } } }],
    })
    assert.ok(selection.exclusions[0].count > 0, JSON.stringify(selection.exclusions))
    const plan = await proposePlan(d.fx, selection.selection_id)
    const page = await (await newContext(d.browser)).newPage()
    await signIn(page, d.fx, 'reviewer', `/review/plans/${plan.plan_id}`)
    const glance = await page.getByTestId('glance').innerText()
    assert.match(glance, new RegExp(`excluding the records where tags contain enterprise \\(${selection.exclusions[0].count}, rule "legal_hold"\\)`), glance)
  })
})
