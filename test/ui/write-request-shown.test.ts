import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { thingsResourceConfig } from '../plans/support/odd-upstream.js'
import { newContext, signIn } from './support.js'
import { thingsGatewayWithBrowser } from './things-support.js'

/**
 * An http action's write is a request the config describes (method, path, body template), not only the fields it
 * sets: `set: {status: closed}` may be written by `DELETE /things/{id}`, or by a POST whose body carries more than
 * the set fields. The plan page said only "status → closed", so a reviewer approved a delete, or a refund in the
 * body, that no page named.
 */
describe('plan page: an http action names the request each record is written by', () => {
  const t = thingsGatewayWithBrowser(['things'], (c, origin) => {
    const things = thingsResourceConfig(origin) as any
    things.actions.close = {
      description: 'Close a thing',
      params: { note: { type: 'string' } },
      set: { status: 'closed' },
      precondition: { status: 'open' },
      write: { style: 'action', method: 'POST', path: '/things/{id}/close', body: { status: '{{set.status}}', refund_all: true, note: '{{params.note}}' } },
    }
    things.actions.remove = { set: { status: 'closed' }, precondition: { status: 'open' }, write: { style: 'action', method: 'DELETE', path: '/things/{id}' } }
    c.resources.things = things
  })

  test('the method, the path and the body template of the write are on the plan page', async () => {
    const selection = await t.post('/v1/resources/things/selections', { filter: { status: 'open' } })
    const close = await t.post(`/v1/selections/${selection.selection_id}/plans`, { action: { type: 'close', params: { note: 'tidy up' } } })
    const remove = await t.post(`/v1/selections/${selection.selection_id}/plans`, { action: { type: 'remove' } })
    const page = await (await newContext(t.browser)).newPage()
    await signIn(page, t.fx, 'reviewer', `/review/plans/${close.plan_id}`)
    const shown = await page.getByTestId('write-request').innerText()
    assert.match(shown, /POST \/things\/\{id\}\/close/)
    assert.match(shown, /\{"status":"\{\{set\.status\}\}","refund_all":true,"note":"\{\{params\.note\}\}"\}/)
    await page.goto(`${t.fx.base}/review/plans/${remove.plan_id}`)
    assert.match(await page.getByTestId('write-request').innerText(), /DELETE \/things\/\{id\} with no body/)
  })
})
