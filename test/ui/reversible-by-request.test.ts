import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { thingsResourceConfig } from '../plans/support/odd-upstream.js'
import { newContext, screenshot, signIn } from './support.js'
import { thingsGatewayWithBrowser } from './things-support.js'

/**
 * An action is reversible by default, and its compensation writes through the action's own request with each
 * record's before-values. For a `DELETE /things/{id}` that request deletes again; for an endpoint that does the
 * change itself (`POST /things/{id}/close`) it closes again unless the endpoint sets what its body says. The plan
 * page said "(reversible)" and "Yes … a compensation plan can restore them" for both.
 */
describe('plan page: reversible is said as far as the write request allows (Chromium, an odd http upstream)', () => {
  const t = thingsGatewayWithBrowser(['things'], (c, origin) => {
    const things = thingsResourceConfig(origin) as any
    things.actions.close = {
      set: { status: 'closed' },
      precondition: { status: 'open' },
      write: { style: 'action', method: 'POST', path: '/things/{id}/close', body: { status: '{{set.status}}' } },
    }
    things.actions.remove = { set: { status: 'closed' }, precondition: { status: 'open' }, write: { style: 'action', method: 'DELETE', path: '/things/{id}' } }
    c.resources.things = things
  })

  test('a DELETE is not restorable, an action endpoint only as far as it sets its body, a patch is', async () => {
    const selection = await t.post('/v1/resources/things/selections', { filter: { status: 'open' } })
    const plans = {
      remove: await t.post(`/v1/selections/${selection.selection_id}/plans`, { action: { type: 'remove' } }),
      close: await t.post(`/v1/selections/${selection.selection_id}/plans`, { action: { type: 'close' } }),
      patch: await t.post(`/v1/selections/${selection.selection_id}/plans`, { action: { type: 'set_status', params: { status: 'closed' } } }),
    }
    const page = await (await newContext(t.browser)).newPage()
    await signIn(page, t.fx, 'reviewer', `/review/plans/${plans.remove.plan_id}`)
    const shown = async (planId: string) => {
      await page.goto(`${t.fx.base}/review/plans/${planId}`)
      return { glance: await page.getByTestId('glance').innerText(), reversible: await page.getByTestId('reversible').innerText() }
    }
    const remove = await shown(plans.remove.plan_id)
    await screenshot(page, 'reversible-delete')
    assert.doesNotMatch(remove.glance, /\(reversible\)/, remove.glance)
    assert.match(remove.glance, /not restorable: its write is a DELETE/, remove.glance)
    assert.doesNotMatch(remove.reversible, /^Yes/, remove.reversible)
    assert.match(remove.reversible, /DELETE \/things\/\{id\}/, remove.reversible)
    const close = await shown(plans.close.plan_id)
    assert.doesNotMatch(close.glance, /\(reversible\)/, close.glance)
    assert.match(close.glance, /reversible only if POST \/things\/\{id\}\/close sets what its body says/, close.glance)
    assert.match(close.reversible, /same request, POST \/things\/\{id\}\/close/, close.reversible)
    const patch = await shown(plans.patch.plan_id)
    assert.match(patch.glance, /\(reversible\)/, patch.glance)
    assert.match(patch.reversible, /^Yes\./, patch.reversible)
  })
})
